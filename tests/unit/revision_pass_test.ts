/**
 * The audit's incremental revision parser must give exactly what decoding
 * and `parseView` of every revision gives: checked here over long random
 * histories of small edits, including damage (headings, end markers, bad
 * lines, duplicates, CR and other line breaks, invalid UTF-8).
 */
import { assert, assertEquals } from "../helpers/assert.ts";
import { RevisionParser, type RevisionView } from "../../engine/integrity/revision_pass.ts";
import { parseView } from "../../engine/model/hot.ts";
import { decodeUtf8Strict } from "../../engine/model/text.ts";

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");

function entryLine(tier: number, n: number, key = `k.s${n}`): string {
  const id = `R${pad(1 + (n % 900), 6)}-E${pad(n % 1000, 3)}`;
  if (tier === 1) {
    return `[${id}] [K:${key}] [fact] [T:confirmed] [SRC:user] [ops] Fact ${n} holds. -> .bimri/log/R000001.md`;
  }
  if (tier === 2) {
    return `[${id}] [K:${key}] [I:3] [active] [T:working] [SRC:agent] [F:R000001] [L:R000002] [] Subject ${n} text é. -> .bimri/log/R000002.md`;
  }
  return `[P${
    pad(n % 10000, 4)
  }] [K:${key}] [developing] [obs:2] [ev:R000001-E001] Pattern ${n}. | Falsify: counter ${n}.`;
}

function baseView(random: () => number, counter: { n: number }): string[] {
  const lines = ["# BIMRI Memory", "", "<!-- BIMRI v5.0.2 | Generated. -->", ""];
  const headings = [
    "## Tier 1: Core Intelligence",
    "## Tier 2: Active Context",
    "## Tier 3: Pattern Recognition",
  ];
  for (let tier = 1; tier <= 3; tier++) {
    lines.push(headings[tier - 1], "", `<!-- Tier ${tier} soft target: state.json. -->`);
    const count = 2 + Math.floor(random() * 8);
    for (let i = 0; i < count; i++) lines.push(entryLine(tier, counter.n++));
    lines.push("");
  }
  lines.push("<!-- END BIMRI -->");
  return lines;
}

/** The tier of the section holding line `index` (by the headings above it). */
function tierAt(lines: string[], index: number): number {
  for (let i = Math.min(index, lines.length - 1); i >= 0; i--) {
    const m = /^## Tier ([123])/.exec(lines[i]);
    if (m) return Number(m[1]);
  }
  return 2;
}

const NOISE = [
  "",
  "<!-- a comment -->",
  "# a note",
  "## Tier 2: Active Context",
  "<!-- END BIMRI -->",
  "not an entry at all",
  "  ",
];

function mutate(lines: string[], random: () => number, counter: { n: number }): string[] {
  const out = [...lines];
  const at = Math.floor(random() * (out.length + 1));
  const pick = random();
  const tier = tierAt(out, at);
  const entryIndexes = out.map((l, i) => (l.startsWith("[") ? i : -1)).filter((i) => i >= 0);
  const someEntry = entryIndexes[Math.floor(random() * entryIndexes.length)];
  if (pick < 0.45 && someEntry !== undefined) {
    // Update a subject in place (same key, new ID), as most commits do.
    const key = /\[K:([^\]]+)\]/.exec(out[someEntry])?.[1];
    out[someEntry] = entryLine(tierAt(out, someEntry), counter.n++, key);
  } else if (pick < 0.6) {
    // A new subject: inside its tier, or at the end of the tier's entries.
    const last = entryIndexes.filter((i) => tierAt(out, i) === tier).pop();
    const where = random() < 0.5 && last !== undefined ? last + 1 : at;
    out.splice(where, 0, entryLine(tierAt(out, where), counter.n++));
  } else if (pick < 0.68 && someEntry !== undefined) {
    out.splice(someEntry, 1);
  } else if (pick < 0.72) {
    out.splice(at, 0, NOISE[Math.floor(random() * NOISE.length)]);
  } else if (pick < 0.76 && out.length > 0) {
    out.splice(Math.floor(random() * out.length), 1);
  } else if (pick < 0.8 && someEntry !== undefined) {
    // A duplicate of another entry (ID and key).
    out.splice(at, 0, out[someEntry]);
  } else if (pick < 0.84) {
    // An entry of the wrong tier, or with tags that are not normalized.
    out.splice(at, 0, entryLine(tier === 3 ? 2 : 3, counter.n++));
    if (random() < 0.5) out[at] = out[at].replace("[ops]", "[Ops,b,a]").replace("[] ", "[B] ");
  } else if (pick < 0.88 && someEntry !== undefined) {
    // Other line breaks and surrounding whitespace.
    const breaks = ["\r", "\u2028", "\x85", "\v", "  ", "\t"];
    out[someEntry] = out[someEntry] + breaks[Math.floor(random() * breaks.length)];
  } else if (pick < 0.92 && someEntry !== undefined) {
    out[someEntry] = "  " + out[someEntry];
  } else if (someEntry !== undefined) {
    // A long text (over the small entry_max_chars the test uses).
    out[someEntry] = out[someEntry].replace(" text ", " text " + "x".repeat(150) + " ");
  }
  return out;
}

function toBytes(lines: string[], random: () => number): Uint8Array {
  const bytes = new TextEncoder().encode(lines.join("\n") + (random() < 0.98 ? "\n" : ""));
  if (random() < 0.01 && bytes.length > 10) {
    const copy = bytes.slice();
    copy[Math.floor(random() * copy.length)] = 0xff;
    return copy;
  }
  return bytes;
}

/** A full parse's answer: findings, entries and each entry's line. */
function expected(bytes: Uint8Array, max: number): unknown {
  const text = decodeUtf8Strict(bytes);
  if (text === null) return null;
  const view = parseView(text, max);
  return shape(view, view.entries.map((e) => e.line));
}

function shape(view: RevisionView | null, lines: ArrayLike<number>): unknown {
  if (view === null) return null;
  return {
    errors: view.errors,
    entries: view.entries.map((e, i) => ({ entry: e.entry, raw: e.raw, line: lines[i] })),
  };
}

Deno.test("incremental revision parsing equals a full parse of every revision", () => {
  let incremental = 0;
  let revisions = 0;
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const random = rng(seed);
    const counter = { n: 1 };
    const max = 160;
    const parser = new RevisionParser(max);
    let lines = baseView(random, counter);
    let clean = lines;
    for (let step = 0; step < 250; step++) {
      // Mostly clean histories (one edit), sometimes several edits at once.
      const edits = random() < 0.8 ? 1 : 2 + Math.floor(random() * 3);
      for (let i = 0; i < edits; i++) lines = mutate(lines, random, counter);
      // Sometimes a fresh view, as after a rewrite of the whole memory.
      if (random() < 0.03) lines = baseView(random, counter);
      const bytes = toBytes(lines, random);
      const before = parser.incrementalCount;
      const got = parser.parse(bytes);
      // Damage is usually repaired by the next revision.
      if (got === null || got.errors.length > 0) {
        if (random() < 0.9) lines = clean;
      } else clean = lines;
      if (parser.incrementalCount > before) incremental++;
      revisions++;
      const answer = shape(got, parser.lastLines());
      assertEquals(answer, expected(bytes, max), `seed ${seed} step ${step}`);
      // Identical bytes again give the identical answer.
      if (random() < 0.05) assertEquals(shape(parser.parse(bytes), parser.lastLines()), answer);
    }
  }
  // The comparison must exercise the incremental path, not only the full parse.
  assert(incremental > revisions / 4, `only ${incremental} of ${revisions} were incremental`);
});
