/**
 * Parsing every revision of a long history for the full audit (doctor).
 *
 * Why incremental: at 10,000 runs the revisions folder holds about 460 MB,
 * and decoding, splitting and parsing every revision from scratch was the
 * largest single cost of doctor. Consecutive revisions differ in a line or
 * two. So each revision is compared byte for byte with the one read before
 * it (a native compare); when the difference is a block of whole lines
 * inside one tier of a view that parsed without any finding, only that block
 * is decoded and parsed (with `parseView` itself, under the same tier
 * heading), and the rest of the previous parse is reused. Everything else
 * (a first revision, a previous revision with findings, a change that
 * touches a heading, the end marker, a comment line or a line break other
 * than LF, a new finding in the block, a duplicate ID or key) takes the full
 * `parseView` of the whole text. The answers are exactly those of decoding
 * and parsing every revision in full (tests/unit/revision_pass_test.ts
 * checks this against random edits); only the work differs.
 */
import { Buffer } from "node:buffer";
import { type MemoryEntry, newViewParseMemo, parseView, type ViewParseMemo } from "../model/hot.ts";
import { pyStrip } from "../model/text.ts";
import { decodeUtf8Fast } from "./bulk_read.ts";

/** One entry of a revision: the parsed entry and its trimmed line. */
export type RevisionEntry = { entry: MemoryEntry; raw: string };

/**
 * What the audit needs of a parsed revision: its entries (in line order) and
 * grammar findings. Line numbers are kept apart (`RevisionParser.lastLines`),
 * so entries that only moved are shared between revisions, not copied.
 */
export type RevisionView = { entries: RevisionEntry[]; errors: string[] };

/**
 * The previous revision, kept for the comparison. Its arrays are updated in
 * place from one revision to the next (a history of 10,000 revisions would
 * otherwise copy every list each time; the garbage alone grew the heap).
 */
type Previous = {
  /** An own copy of its bytes. */
  bytes: Uint8Array;
  view: RevisionView;
  /** Line index of each entry of `view`. */
  lines: number[];
  /** LF is the only line break in the text, so `starts` maps bytes to lines. */
  lfOnly: boolean;
  /** Byte offset of each line's start (LF-only texts). */
  starts: number[];
  /** Indices of lines that, trimmed, start with "#" or "<" (headings, comments, end marker). */
  structural: number[];
};

// Line breaks of Python's splitlines() other than LF.
// deno-lint-ignore no-control-regex -- exactly the other breaks splitLines honours
const OTHER_BREAKS = /[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;
const LF = 10;
/** Tier headings and end marker of the small view a changed block is parsed in. */
const HEADINGS = [
  "## Tier 1: Core Intelligence",
  "## Tier 2: Active Context",
  "## Tier 3: Pattern Recognition",
];
const END_MARKER = "<!-- END BIMRI -->";
/** Below this many bytes the first difference is searched byte by byte. */
const SMALL = 64;

function isStructural(line: string): boolean {
  const trimmed = pyStrip(line);
  return trimmed[0] === "#" || trimmed[0] === "<";
}

/** True when a[aStart, aStart + n) equals b[bStart, bStart + n) (a native compare). */
function sameBytes(
  a: Uint8Array,
  aStart: number,
  b: Uint8Array,
  bStart: number,
  n: number,
): boolean {
  return Buffer.compare(a.subarray(aStart, aStart + n), b.subarray(bStart, bStart + n)) === 0;
}

/** Length of the common prefix of `a` and `b` (a binary search of native compares). */
function commonPrefix(a: Uint8Array, b: Uint8Array): number {
  // Invariant: the first `lo` bytes match; a difference lies before `hi` (or none does).
  let lo = 0;
  let hi = Math.min(a.length, b.length);
  if (sameBytes(a, 0, b, 0, hi)) return hi;
  while (hi - lo > SMALL) {
    const mid = (lo + hi) >> 1;
    if (sameBytes(a, lo, b, lo, mid - lo)) lo = mid;
    else hi = mid;
  }
  while (lo < hi && a[lo] === b[lo]) lo++;
  return lo;
}

/** Length of the common suffix of `a` and `b`, at most `limit`. */
function commonSuffix(a: Uint8Array, b: Uint8Array, limit: number): number {
  const same = (from: number, n: number) =>
    sameBytes(a, a.length - from - n, b, b.length - from - n, n);
  let lo = 0;
  let hi = limit;
  if (same(0, hi)) return hi;
  while (hi - lo > SMALL) {
    const mid = (lo + hi) >> 1;
    if (same(lo, mid - lo)) lo = mid;
    else hi = mid;
  }
  while (lo < hi && a[a.length - 1 - lo] === b[b.length - 1 - lo]) lo++;
  return lo;
}

/** Index of the first of the ascending `values` that is at least `target` (or its length). */
function firstAtOrAfter(values: readonly number[], target: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid] < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the line starting at byte `offset`, or -1 when no line starts there. */
function lineAt(starts: readonly number[], offset: number): number {
  const i = firstAtOrAfter(starts, offset);
  return i < starts.length && starts[i] === offset ? i : -1;
}

const NO_ERRORS: string[] = [];

/** Parses a history's revisions one after another (see the header). */
export class RevisionParser {
  private previous: Previous | null = null;
  private buffers = [new Uint8Array(0), new Uint8Array(0)];
  private turn = 0;
  private readonly memo: ViewParseMemo = newViewParseMemo();
  /** How many revisions reused the previous parse (tests check the path is taken). */
  incrementalCount = 0;

  /** A pass over views whose entries may hold at most `entryMaxChars` characters. */
  constructor(private readonly entryMaxChars: number) {}

  /** Line index of each entry of the last view `parse` returned (tests compare them). */
  lastLines(): readonly number[] {
    return this.previous?.lines ?? [];
  }

  /**
   * The revision's entries and findings, exactly as `parseView` of its
   * decoded text gives them, or null when the bytes are not UTF-8. `bytes`
   * is only read during the call; the view is only valid until the next
   * `parse` (its arrays are reused): copy what must be kept.
   */
  parse(bytes: Uint8Array): RevisionView | null {
    const previous = this.previous;
    if (previous) {
      const quick = this.incremental(previous, bytes);
      if (quick) {
        this.incrementalCount++;
        return quick;
      }
    }
    const text = decodeUtf8Fast(bytes);
    if (text === null) {
      this.previous = null;
      return null;
    }
    const parsed = parseView(text, this.entryMaxChars, this.memo);
    const starts: number[] = [];
    const lfOnly = !OTHER_BREAKS.test(text);
    if (lfOnly) {
      for (let at = 0; at < bytes.length;) {
        starts.push(at);
        const nl = bytes.indexOf(LF, at);
        if (nl < 0) break;
        at = nl + 1;
      }
    }
    const structural: number[] = [];
    parsed.lines.forEach((line, index) => {
      if (isStructural(line)) structural.push(index);
    });
    const previousState: Previous = {
      bytes: this.keep(bytes),
      view: { entries: parsed.entries, errors: parsed.errors },
      lines: parsed.entries.map((e) => e.line),
      lfOnly: lfOnly && starts.length === parsed.lines.length,
      starts,
      structural,
    };
    this.previous = previousState;
    return previousState.view;
  }

  /** Copies `bytes` into the buffer not holding the previous revision (two take turns). */
  private keep(bytes: Uint8Array): Uint8Array {
    this.turn ^= 1;
    if (this.buffers[this.turn].length < bytes.length) {
      this.buffers[this.turn] = new Uint8Array(bytes.length * 2);
    }
    const target = this.buffers[this.turn].subarray(0, bytes.length);
    target.set(bytes);
    return target;
  }

  /** The view from the previous one when the change allows it (see the header), else null. */
  private incremental(prev: Previous, bytes: Uint8Array): RevisionView | null {
    const a = prev.bytes;
    const p = commonPrefix(a, bytes);
    if (p === a.length && p === bytes.length) return prev.view;
    if (!prev.lfOnly || prev.view.errors.length > 0) return null;
    const s = commonSuffix(a, bytes, Math.min(a.length, bytes.length) - p);
    // The changed block, widened to whole lines: [rs, eA) in the old text, [rs, eB) in the new.
    const rs = p === 0 ? 0 : a.lastIndexOf(LF, p - 1) + 1;
    const dA = a.length - s;
    const dB = bytes.length - s;
    let eA = dA;
    if (!(dA > 0 && a[dA - 1] === LF && dB > 0 && bytes[dB - 1] === LF)) {
      const nl = a.indexOf(LF, dA);
      if (nl < 0) return null;
      eA = nl + 1;
    }
    const eB = dB + (eA - dA);
    if (eA >= a.length || eB >= bytes.length || rs > eA || rs > eB) return null;
    const { starts, lines, structural } = prev;
    const entries = prev.view.entries;
    const startLine = lineAt(starts, rs);
    const endLine = lineAt(starts, eA);
    if (startLine < 0 || endLine < startLine) return null;
    // Entries [0, first) lie before the block, [after, n) after it.
    const first = firstAtOrAfter(lines, startLine);
    const after = firstAtOrAfter(lines, endLine);
    // The block's tier is that of its neighbouring entry when no heading, comment
    // or end marker lies between them (nor in the old block): the entry before,
    // or, for a block ahead of every entry, the entry after.
    let neighbour: number;
    if (first > 0) {
      neighbour = first - 1;
      const from = lines[neighbour];
      for (const line of structural) if (line > from && line < endLine) return null;
    } else if (after < entries.length) {
      neighbour = after;
      const to = lines[neighbour];
      for (const line of structural) if (line >= startLine && line < to) return null;
    } else return null;
    const block = decodeUtf8Fast(bytes.subarray(rs, eB));
    if (block === null || OTHER_BREAKS.test(block)) return null;
    const tier = entries[neighbour].entry.tier;
    // The block under its own tier's heading, in an otherwise empty view.
    const head = HEADINGS.slice(0, tier).join("\n") + "\n";
    const tail = [...HEADINGS.slice(tier), END_MARKER].join("\n") + "\n";
    const small = parseView(head + block + tail, this.entryMaxChars);
    if (small.errors.length > 0) return null;
    const blockLines = small.lines.length - HEADINGS.length - 1;
    const shift = blockLines - (endLine - startLine);
    // A new entry may not repeat the ID or key of an entry outside the block.
    for (const added of small.entries) {
      const { id, key } = added.entry;
      for (let i = 0; i < entries.length; i++) {
        if (i === first) i = after;
        if (i >= entries.length) break;
        if (entries[i].entry.id === id || entries[i].entry.key === key) return null;
      }
    }
    // Accepted: update the previous revision's state in place.
    entries.splice(
      first,
      after - first,
      ...small.entries.map((e) => ({ entry: e.entry, raw: e.raw })),
    );
    lines.splice(first, after - first, ...small.entries.map((e) => startLine + e.line - tier));
    if (shift !== 0) {
      for (let i = first + small.entries.length; i < lines.length; i++) lines[i] += shift;
    }
    const blockStarts: number[] = [];
    for (let at = rs; at < eB; at = bytes.indexOf(LF, at) + 1) blockStarts.push(at);
    starts.splice(startLine, endLine - startLine, ...blockStarts);
    const moved = eB - eA;
    if (moved !== 0) {
      for (let i = startLine + blockStarts.length; i < starts.length; i++) starts[i] += moved;
    }
    const kept = structural.filter((line) => line < startLine || line >= endLine);
    structural.length = 0;
    for (const line of kept) structural.push(line < startLine ? line : line + shift);
    for (let i = 0; i < blockLines; i++) {
      if (isStructural(small.lines[tier + i])) structural.push(startLine + i);
    }
    structural.sort((x, y) => x - y);
    prev.bytes = this.keep(bytes);
    if (prev.view.errors !== NO_ERRORS) prev.view = { entries, errors: NO_ERRORS };
    return prev.view;
  }
}
