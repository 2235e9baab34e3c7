/**
 * Residency (protocol 7.4, formats section 11): where a key's current
 * generation lives (hot line or cold-current record), the deterministic
 * retention order, and the cooling plan that keeps the generated view under
 * its byte ceiling.
 */
import {
  compactHeader,
  linesToText,
  type MemoryEntry,
  parseAnyEntry,
  parseViewShared,
  type Tier2Entry,
  type ViewEntry,
} from "../model/hot.ts";
import { coldRecordOf, type State } from "../model/state.ts";
import { pyPercent, splitLines, utf8Length } from "../model/text.ts";
import { daysBetween, localDate, now } from "../model/time.ts";
import type { ParsedView } from "../model/hot.ts";

/** The current generation of a key: a hot line or a cold-current record. */
export type LiveGeneration = {
  entry: MemoryEntry;
  /** The exact stored line (trimmed). */
  raw: string;
  storage: "hot" | "cold";
  /** Line index in the view (hot only). */
  line: number;
  /** Cold binding (cold only). */
  archiveProposalId?: string;
  archiveDate?: string;
};

/** Finds the current generation of `key`: the hot line first, else the cold record. */
export function findLive(view: ParsedView, state: State, key: string): LiveGeneration | null {
  const hot = view.entries.find((e) => e.entry.key === key);
  if (hot) return { entry: hot.entry, raw: hot.raw, storage: "hot", line: hot.line };
  const cold = coldRecordOf(state, key);
  if (!cold) return null;
  const entry = parseAnyEntry(cold.raw_line);
  if (entry === null) return null;
  return {
    entry,
    raw: cold.raw_line,
    storage: "cold",
    line: -1,
    archiveProposalId: cold.archived_by,
    archiveDate: cold.archived_on,
  };
}

const DECAY: ReadonlyArray<[number, number]> = [
  [1, 1.0],
  [3, 0.8],
  [5, 0.5],
  [10, 0.35],
  [15, 0.2],
  [20, 0.15],
];

/** Age multiplier for an entry last used on `runDate` (unknown date: 0.1). */
export function ageMultiplier(runDate: string | undefined, today: string): number {
  if (!runDate) return 0.1;
  const age = Math.max(0, daysBetween(runDate, today));
  for (const [days, factor] of DECAY) if (age <= days) return factor;
  return 0.1;
}

const STATUS_RANK: Record<string, number> = { closed: 0, watch: 1, active: 2 };

/** The retention tuple of a Tier 2 entry (ascending = cools first). */
export function retentionKey(
  entry: Tier2Entry,
  state: State,
  today: string,
  ages?: Map<string | undefined, number>,
): [number, number, string, string, string] {
  const runDate = state.run_dates[entry.last_run];
  let age = ages?.get(runDate);
  if (age === undefined) {
    age = ageMultiplier(runDate, today);
    ages?.set(runDate, age);
  }
  return [
    entry.importance * age,
    STATUS_RANK[entry.status] ?? 3,
    runDate ?? "0001-01-01",
    entry.key,
    entry.id,
  ];
}

function compareTuples(
  a: [number, number, string, string, string],
  b: [number, number, string, string, string],
): number {
  for (let i = 0; i < a.length; i++) {
    if (a[i] < b[i]) return -1;
    if (a[i] > b[i]) return 1;
  }
  return 0;
}

/** Hot Tier 2 entries in retention order, coolest first, skipping `exceptKey`. */
export function retentionOrder(
  view: ParsedView,
  state: State,
  exceptKey: string | null,
  today: string = localDate(now()),
): ViewEntry[] {
  const candidates = view.entries.filter((e) => e.entry.tier === 2 && e.entry.key !== exceptKey);
  // Entries share few run dates: each date's age multiplier is computed once per call.
  const ages = new Map<string | undefined, number>();
  const keyed = candidates.map((e) => ({
    e,
    k: retentionKey(e.entry as Tier2Entry, state, today, ages),
  }));
  keyed.sort((x, y) => compareTuples(x.k, y.k));
  return keyed.map((x) => x.e);
}

/** A cooling plan: the view text that fits and the lines that leave it (in order). */
export type CoolingPlan = { text: string; cooled: ViewEntry[] };

/**
 * Makes `text` fit under `hot_max_bytes`: compact header comments, then cool
 * Tier 2 residents other than `incomingKey` in retention order, then the
 * incoming Tier 2 line itself. Null when nothing more can cool (the intent
 * must be held as capacity-residency-required). With `headText`, a change
 * that strictly shrinks an already oversized head is taken as it is.
 */
export function planCooling(
  text: string,
  state: State,
  incomingKey: string,
  headText?: string,
): CoolingPlan | null {
  const limit = state.hot_max_bytes;
  if (utf8Length(text) <= limit) return { text, cooled: [] };
  // A head already over the ceiling (legacy overflow, a lowered ceiling) may
  // still take any change that strictly shrinks it, without cooling.
  if (headText !== undefined) {
    const before = utf8Length(headText);
    if (before > limit && utf8Length(text) < before) return { text, cooled: [] };
  }
  let content = text;
  const compacted = linesToText(compactHeader(splitLines(text)));
  if (utf8Length(compacted) < utf8Length(content)) {
    content = compacted;
    if (utf8Length(content) <= limit) return { text: content, cooled: [] };
  }
  const parsed = parseViewShared(content, state.entry_max_chars);
  const order = retentionOrder(parsed, state, incomingKey);
  const cooled: ViewEntry[] = [];
  let lines = splitLines(content);
  // The entries of the text left so far, kept in step with `lines` rather
  // than parsed again after each removal: removing an entry line changes no
  // other line's parse, only the index of the lines after it.
  const start = linesToText(lines);
  let current = start === content
    ? parsed.entries
    : parseViewShared(start, state.entry_max_chars).entries;
  const removeKey = (key: string): boolean => {
    const at = current.findIndex((e) => e.entry.key === key);
    const live = at < 0 ? undefined : current[at];
    if (!live || live.entry.tier !== 2) return false;
    lines = [...lines.slice(0, live.line), ...lines.slice(live.line + 1)];
    current = [
      ...current.slice(0, at),
      ...current.slice(at + 1).map((e) => ({ ...e, line: e.line - 1 })),
    ];
    cooled.push(live);
    return true;
  };
  for (const candidate of order) {
    if (!removeKey(candidate.entry.key)) continue;
    const candidateText = linesToText(lines);
    if (utf8Length(candidateText) <= limit) return { text: candidateText, cooled };
  }
  // A Tier 2 incoming generation may itself become cold-current rather than be lost.
  if (removeKey(incomingKey)) {
    const candidateText = linesToText(lines);
    if (utf8Length(candidateText) <= limit) return { text: candidateText, cooled };
  }
  return null;
}

/** The retention forecast `maintain` prints (nothing is changed). */
export type RetentionForecast = {
  usedBytes: number;
  ceiling: number;
  /** Rounded percentage of the ceiling in use. */
  percent: number;
  coldCurrent: number;
  /** The Tier 2 key that would cool first, when pressure is at or above 90%. */
  nextToCool: string | null;
  /** The forecast's sentence for people. */
  advice: string;
};

/** Byte pressure and the next deterministic cooling candidate of the head. */
export function retentionForecast(view: ParsedView, text: string, state: State): RetentionForecast {
  const usedBytes = utf8Length(text);
  const ceiling = state.hot_max_bytes;
  const pressure = usedBytes / ceiling;
  const order = retentionOrder(view, state, null);
  let nextToCool: string | null = null;
  let advice: string;
  if (pressure >= 0.9 && order.length > 0) {
    nextToCool = order[0].entry.key;
    advice =
      `Next byte-pressure admission can cool ${nextToCool} deterministically; no owner action is pending.`;
  } else if (pressure >= 0.9) {
    advice =
      "No Tier 2 resident is currently eligible; an oversized incoming intent will be held durably without changing current truth.";
  } else {
    advice = "Residency is healthy; no pressure action is needed.";
  }
  return {
    usedBytes,
    ceiling,
    percent: pyPercent(pressure),
    coldCurrent: Object.keys(state.cold_current).length,
    nextToCool,
    advice,
  };
}
