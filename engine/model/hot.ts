/**
 * The hot-memory grammar (hot grammar v5.0.2): entry lines of the three tiers,
 * the generated view skeleton, parsing with validation, and line-level edits.
 */
import { ANY_ENTRY_ID, KEY, PATTERN_ID, TAG } from "./ids.ts";
import { codePointLength, pyRstrip, pyStrip, splitLines } from "./text.ts";

/** Tier 1 kinds. */
export const KINDS = ["decision", "fact", "pref", "rule"] as const;
/** Tier 2 statuses. */
export const STATUSES = ["active", "watch", "closed"] as const;
/** Trust levels a line may carry. */
export const TRUSTS = ["working", "confirmed", "contested"] as const;
/** Sources a line may carry. */
export const SOURCES = ["user", "agent", "external", "system", "legacy"] as const;
/** Tier 3 confidence levels. */
export const CONFIDENCES = ["emerging", "developing", "established"] as const;

/** Fields shared by Tier 1 and Tier 2 lines. */
export type ClaimFields = {
  id: string;
  key: string;
  trust: string;
  source: string;
  tags: string[];
  text: string;
  pointer: string | null;
};

/** A Tier 1 line. */
export type Tier1Entry = ClaimFields & { tier: 1; kind: string };
/** A Tier 2 line. */
export type Tier2Entry = ClaimFields & {
  tier: 2;
  importance: number;
  status: string;
  first_run: string;
  last_run: string;
};
/** A Tier 3 line. */
export type Tier3Entry = {
  tier: 3;
  id: string;
  key: string;
  confidence: string;
  observations: number;
  evidence: string[];
  text: string;
  falsifier: string;
};
/** Any memory line, parsed. */
export type MemoryEntry = Tier1Entry | Tier2Entry | Tier3Entry;

const T1 =
  /^\[(R\d+-E\d+)\]\s+\[K:([a-z0-9][a-z0-9.-]*)\]\s+\[(decision|fact|pref|rule)\]\s+\[T:(working|confirmed|contested)\]\s+\[SRC:(user|agent|external|system|legacy)\]\s+\[([^\]]*)\]\s+(.+?)(?:\s+->\s+(\S+))?$/;
const T2 =
  /^\[(R\d+-E\d+)\]\s+\[K:([a-z0-9][a-z0-9.-]*)\]\s+\[I:([1-5])\]\s+\[(active|watch|closed)\]\s+\[T:(working|confirmed|contested)\]\s+\[SRC:(user|agent|external|system|legacy)\]\s+\[F:(R\d+)\]\s+\[L:(R\d+)\]\s+\[([^\]]*)\]\s+(.+?)(?:\s+->\s+(\S+))?$/;
const T3 =
  /^\[(P\d+)\]\s+\[K:([a-z0-9][a-z0-9.-]*)\]\s+\[(emerging|developing|established)\]\s+\[obs:(\d+)\]\s+\[ev:([^\]]*)\]\s+(.+?)\s+\|\s+Falsify:\s+(.+)$/;

function splitList(value: string): string[] {
  const trimmed = pyStrip(value);
  return trimmed === "" ? [] : trimmed.split(",").map((t) => pyStrip(t));
}

/** Parses one line with the grammar of `tier`; null when it does not match. */
export function parseEntryForTier(line: string, tier: 1 | 2 | 3): MemoryEntry | null {
  const text = pyStrip(line);
  if (tier === 1) {
    const m = T1.exec(text);
    if (!m) return null;
    return {
      tier: 1,
      id: m[1],
      key: m[2],
      kind: m[3],
      trust: m[4],
      source: m[5],
      tags: splitList(m[6]),
      text: m[7],
      pointer: m[8] ?? null,
    };
  }
  if (tier === 2) {
    const m = T2.exec(text);
    if (!m) return null;
    return {
      tier: 2,
      id: m[1],
      key: m[2],
      importance: Number(m[3]),
      status: m[4],
      trust: m[5],
      source: m[6],
      first_run: m[7],
      last_run: m[8],
      tags: splitList(m[9]),
      text: m[10],
      pointer: m[11] ?? null,
    };
  }
  const m = T3.exec(text);
  if (!m) return null;
  return {
    tier: 3,
    id: m[1],
    key: m[2],
    confidence: m[3],
    observations: Number(m[4]),
    evidence: splitList(m[5]),
    text: m[6],
    falsifier: m[7],
  };
}

/**
 * The runs a line stored outside a revision names in `F:` and `L:`: a pair for
 * a Tier 2 line, "other" for a Tier 1 or 3 line, null when `parseAnyEntry`
 * would find no memory line. Same grammar, without building the entry (start
 * asks this of every cold line).
 */
export function lineRunRefs(line: string): [string, string] | "other" | null {
  const text = pyStrip(line);
  const m = T2.exec(text);
  if (m) return [m[7], m[8]];
  return T1.test(text) || T3.test(text) ? "other" : null;
}

/** Parses a line stored outside a revision: tries Tier 1, then 2, then 3. */
export function parseAnyEntry(line: string): MemoryEntry | null {
  return parseEntryForTier(line, 1) ?? parseEntryForTier(line, 2) ?? parseEntryForTier(line, 3);
}

/** Renders an entry as one memory line (single spaces between fields). */
export function renderEntry(entry: MemoryEntry): string {
  if (entry.tier === 3) {
    return `[${entry.id}] [K:${entry.key}] [${entry.confidence}] [obs:${entry.observations}] [ev:${
      entry.evidence.join(",")
    }] ${entry.text} | Falsify: ${entry.falsifier}`;
  }
  const tags = `[${entry.tags.join(",")}]`;
  const pointer = entry.pointer ? ` -> ${entry.pointer}` : "";
  if (entry.tier === 1) {
    return `[${entry.id}] [K:${entry.key}] [${entry.kind}] [T:${entry.trust}] [SRC:${entry.source}] ${tags} ${entry.text}${pointer}`;
  }
  return `[${entry.id}] [K:${entry.key}] [I:${entry.importance}] [${entry.status}] [T:${entry.trust}] [SRC:${entry.source}] [F:${entry.first_run}] [L:${entry.last_run}] ${tags} ${entry.text}${pointer}`;
}

/** Normalizes a comma-separated tag list: lowercase, trimmed, de-duplicated in order. */
export function normalizeTags(values: string[]): string[] {
  const out: string[] = [];
  for (const raw of values) {
    const tag = pyStrip(raw).toLowerCase();
    if (tag && !out.includes(tag)) out.push(tag);
  }
  return out;
}

/** The genesis view (revision V000000), 473 bytes. */
export const GENESIS_VIEW: string = [
  "# BIMRI Memory",
  "",
  "<!-- BIMRI v5.0.2 | Generated view. Do not edit directly. -->",
  "<!-- Full history: .bimri/log/ | Revisions: .bimri/revisions/ -->",
  "",
  "## Tier 1: Core Intelligence",
  "",
  "<!-- Confirmed facts, decisions, preferences and rules. Soft target: state.json. -->",
  "",
  "## Tier 2: Active Context",
  "",
  "<!-- Current work, risks and next actions. Soft target: state.json. -->",
  "",
  "## Tier 3: Pattern Recognition",
  "",
  "<!-- Evidence-backed patterns. Soft target: state.json. -->",
  "",
  "<!-- END BIMRI -->",
  "",
].join("\n");

/** Header comment lines and their compact forms used under byte pressure. */
const COMPACT_HEADER: ReadonlyArray<[RegExp, string]> = [
  [
    /^<!-- BIMRI v5\.0\.2 \| Generated view\. Do not edit directly\. -->$/,
    "<!-- BIMRI v5.0.2 | Generated. -->",
  ],
  [
    /^<!-- Confirmed facts, decisions, preferences and rules\. (Soft target|Capacity): state\.json\. -->$/,
    "<!-- Tier 1 soft target: state.json. -->",
  ],
  [
    /^<!-- Current work, risks and next actions\. (Soft target|Capacity): state\.json\. -->$/,
    "<!-- Tier 2 soft target: state.json. -->",
  ],
  [
    /^<!-- Evidence-backed patterns\. (Soft target|Capacity): state\.json\. -->$/,
    "<!-- Tier 3 soft target: state.json. -->",
  ],
];

/** One entry of a parsed view with its line index. */
export type ViewEntry = { entry: MemoryEntry; raw: string; line: number };

/** A parsed view: its raw lines, entries and any grammar errors. */
export type ParsedView = {
  lines: string[];
  entries: ViewEntry[];
  errors: string[];
};

const HEADINGS: Record<string, 1 | 2 | 3> = {
  "## tier 1: core intelligence": 1,
  "## tier 2: active context": 2,
  "## tier 3: pattern recognition": 3,
};

/**
 * Memo for parsing a sequence of similar views in one process (doctor reads
 * every revision in order; consecutive revisions share almost every line):
 * parsed lines per tier and each entry's own grammar findings. When it holds
 * far more lines than the last view, it keeps only that view's lines, so
 * memory stays flat however long the history. Entries come back shared:
 * read-only.
 */
export type ViewParseMemo = {
  lines: Map<string, MemoryEntry | null>[];
  entryErrors: WeakMap<MemoryEntry, string[]>;
};

function tierMaps(): Map<string, MemoryEntry | null>[] {
  return [new Map(), new Map(), new Map(), new Map()];
}

/** A fresh memo for `parseView`. */
export function newViewParseMemo(): ViewParseMemo {
  return { lines: tierMaps(), entryErrors: new WeakMap() };
}

let shared: { entryMaxChars: number; memo: ViewParseMemo } | null = null;

/**
 * `parseView` through one memo shared by the whole process: the views a
 * command parses (the head, a run's base, each planned effect and cooling
 * step) share almost every line, so each line is parsed once. Entries come
 * back shared: read-only. The memo is keyed by `entryMaxChars` and pruned
 * like any memo, so a long-lived process stays flat.
 */
export function parseViewShared(text: string, entryMaxChars = 500): ParsedView {
  if (shared === null || shared.entryMaxChars !== entryMaxChars) {
    shared = { entryMaxChars, memo: newViewParseMemo() };
  }
  return parseView(text, entryMaxChars, shared.memo);
}

/** Drops every memoized line the view just parsed does not hold (keys copied: see parseView). */
function pruneMemo(memo: ViewParseMemo, entries: ViewEntry[]): void {
  const size = memo.lines.reduce((sum, map) => sum + map.size, 0);
  if (size <= 4 * entries.length + 256) return;
  const kept = tierMaps();
  for (const { entry, raw } of entries) {
    kept[entry.tier].set(JSON.parse(JSON.stringify(raw)) as string, entry);
  }
  memo.lines = kept;
}

/** Parses and validates a view's text (grammar rules of protocol section 5). */
export function parseView(text: string, entryMaxChars = 500, memo?: ViewParseMemo): ParsedView {
  const lines = splitLines(text);
  const entries: ViewEntry[] = [];
  const errors: string[] = [];
  let tier: 0 | 1 | 2 | 3 = 0;
  const seen: number[] = [];
  let ended = false;
  let endMarkers = 0;
  lines.forEach((rawLine, index) => {
    const line = pyStrip(rawLine);
    // Only "<" and "#" lowercase to themselves: other lines cannot be a marker or heading.
    const lower = line[0] === "<" || line[0] === "#" ? line.toLowerCase() : "";
    if (lower === "<!-- end bimri -->") {
      endMarkers++;
      ended = true;
      return;
    }
    if (ended) {
      if (line !== "" && !line.startsWith("<!--")) {
        errors.push(`line ${index + 1}: content after the end marker`);
      }
      return;
    }
    if (lower in HEADINGS) {
      tier = HEADINGS[lower];
      seen.push(tier);
      return;
    }
    if (line === "" || line.startsWith("<!--") || line.startsWith("#")) return;
    if (tier === 0) {
      errors.push(`line ${index + 1}: memory line before the first tier heading`);
      return;
    }
    let entry: MemoryEntry | null;
    if (memo) {
      const known = memo.lines[tier].get(line);
      if (known !== undefined) entry = known;
      else {
        // A substring would keep its whole view text alive while the memo
        // holds it; the memo parses an own copy instead.
        const own = JSON.parse(JSON.stringify(line)) as string;
        entry = parseEntryForTier(own, tier);
        memo.lines[tier].set(own, entry);
      }
    } else entry = parseEntryForTier(line, tier);
    if (!entry) {
      errors.push(
        `line ${index + 1}: malformed Tier ${tier} entry (does not match the Tier ${tier} grammar)`,
      );
      return;
    }
    entries.push({ entry, raw: line, line: index });
  });
  if (seen.join(",") !== "1,2,3") {
    errors.push("the view must contain exactly one ordered Tier 1, Tier 2 and Tier 3 heading");
  }
  if (endMarkers !== 1) errors.push("the view must have exactly one end marker");
  const ids = new Set<string>();
  const keys = new Set<string>();
  for (const { entry, raw } of entries) {
    if (ids.has(entry.id)) errors.push(`duplicate entry ID ${entry.id}`);
    if (keys.has(entry.key)) errors.push(`duplicate memory key: ${entry.key}`);
    ids.add(entry.id);
    keys.add(entry.key);
    const known = memo?.entryErrors.get(entry);
    if (known) {
      errors.push(...known);
      continue;
    }
    const before = errors.length;
    if (!KEY.test(entry.key) || entry.key.length > 80) {
      errors.push(`key ${entry.key} is not normalized`);
    }
    if (codePointLength(raw) > 4096) {
      errors.push(`entry ${entry.id}: serialized entry exceeds 4096 characters`);
    }
    if (entry.tier === 3) {
      if (!PATTERN_ID.test(entry.id)) errors.push(`pattern ${entry.id} has an invalid ID`);
      if (entry.evidence.length === 0 || entry.evidence.length > 24) {
        errors.push(`pattern ${entry.id} needs 1-24 evidence IDs`);
      }
      if (entry.evidence.some((e) => !ANY_ENTRY_ID.test(e))) {
        errors.push(`pattern ${entry.id} has invalid evidence`);
      }
      if (entry.text.includes(" | Falsify: ") || entry.falsifier.includes(" | Falsify: ")) {
        errors.push(`pattern ${entry.id} repeats the falsifier separator`);
      }
      if (entry.observations < 1) {
        errors.push(`pattern ${entry.id} needs observations of at least 1`);
      }
    } else {
      const normalized = normalizeTags(entry.tags);
      if (
        normalized.join(",") !== entry.tags.join(",") || entry.tags.some((t) => !TAG.test(t)) ||
        entry.tags.length > 12
      ) {
        errors.push(`entry ${entry.id} has tags that are not normalized`);
      }
      if (entry.source !== "legacy" && codePointLength(entry.text) > entryMaxChars) {
        // Migrated (legacy) text may be longer; new text may not.
        errors.push(`entry ${entry.id} text exceeds ${entryMaxChars} characters`);
      }
    }
    memo?.entryErrors.set(entry, errors.slice(before));
  }
  if (memo) pruneMemo(memo, entries);
  return { lines, entries, errors };
}

/** Joins edited lines into view text: trailing whitespace removed, one final LF. */
export function linesToText(lines: string[]): string {
  return pyRstrip(lines.join("\n")) + "\n";
}

/** Index of the line holding `key`'s entry, or -1. */
export function findKeyLine(view: ParsedView, key: string): ViewEntry | undefined {
  return view.entries.find((e) => e.entry.key === key);
}

/** Where a new entry of tier `tier` goes: the end of its section, before trailing blank lines. */
export function tierInsertionIndex(lines: string[], tier: 1 | 2 | 3): number {
  const start = lines.findIndex((l) => pyStrip(l).toLowerCase().startsWith(`## tier ${tier}`));
  if (start < 0) throw new Error(`the view has no Tier ${tier} heading`);
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    const lower = pyStrip(lines[i]).toLowerCase();
    if (lower.startsWith("## tier ") || lower.startsWith("<!-- end bimri")) {
      end = i;
      break;
    }
  }
  let at = end;
  while (at > start + 1 && pyStrip(lines[at - 1]) === "") at--;
  return at;
}

/** Inserts `line` at the end of tier `tier`'s section (before trailing blank lines). */
export function insertIntoTier(lines: string[], tier: 1 | 2 | 3, line: string): string[] {
  const at = tierInsertionIndex(lines, tier);
  return [...lines.slice(0, at), line, ...lines.slice(at)];
}

/** Replaces the header comments with their compact forms. */
export function compactHeader(lines: string[]): string[] {
  return lines.map((line) => {
    const trimmed = pyStrip(line);
    for (const [pattern, compact] of COMPACT_HEADER) if (pattern.test(trimmed)) return compact;
    return line;
  });
}

/** Number of entries per tier in a parsed view. */
export function tierCounts(view: ParsedView): [number, number, number] {
  const counts: [number, number, number] = [0, 0, 0];
  for (const { entry } of view.entries) counts[entry.tier - 1]++;
  return counts;
}

/**
 * What a run's start needs from the head view, without its lines: entries
 * per tier, every run a Tier 2 line names in F: or L: (sorted, once), and the
 * first validation errors under the entry cap they were checked against (the
 * brief's VALIDATION NEEDED block).
 */
export type HeadFacts = {
  tiers: [number, number, number];
  tier2Runs: string[];
  errors: string[];
  entryMaxChars: number;
};

/** How many validation errors a brief lists (and the head facts keep), as the reference. */
export const BRIEF_VALIDATION_ERRORS = 10;

/** The head facts of a view parsed with the entry cap `entryMaxChars`. */
export function headFacts(view: ParsedView, entryMaxChars: number): HeadFacts {
  const runs = new Set<string>();
  for (const { entry } of view.entries) {
    if (entry.tier !== 2) continue;
    runs.add(entry.first_run);
    runs.add(entry.last_run);
  }
  return {
    tiers: tierCounts(view),
    tier2Runs: [...runs].sort(),
    errors: view.errors.slice(0, BRIEF_VALIDATION_ERRORS),
    entryMaxChars,
  };
}
