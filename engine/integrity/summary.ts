/**
 * The derived authority summary `.bimri/audit-integrity-summary.json` (see
 * authority.ts, layer 3): folder fingerprints recorded after the engine's own
 * healthy writes, plus the held decision IDs and the applying resolution IDs
 * at that moment. Derived data
 * only: a missing, unreadable or stale summary just means the full scan.
 * Also whether it still vouches for every authority folder since the
 * engine's last healthy write (`summaryMatches`). Kept apart from
 * authority.ts and everyday.ts so a read of a store with no active run loads
 * neither the record schemas nor the per-record checks.
 */
import { folderPrint, lstatOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import type { Store } from "../store/store.ts";
import type { State } from "../model/state.ts";
import { RUN_ID } from "../model/ids.ts";

/** Schema of the summary document. */
export const SUMMARY_SCHEMA = 4;
const SUMMARY_NAME = "audit-integrity-summary.json";

/** The authority folders whose entries the summary fingerprints. */
export const WATCHED_FOLDERS = [
  "proposals",
  "decisions",
  "conflicts",
  "resolutions",
  "log",
  // A revision removed (or added) by anyone but bimri's own commit: the slow
  // path then checks that every revision the history names still exists.
  "revisions",
] as const;

/** The summary document. */
export type Summary = {
  schema: number;
  /** Folder -> lstat fingerprint. */
  folders: Record<string, string>;
  run_count: number;
  conflict_count: number;
  /** Active runs with their bases, `R000001:12,R000002:14`. */
  active: string;
  /** IDs of every decision whose outcome is `held`, sorted. */
  held: string[];
  /**
   * IDs of every resolution whose status is `applying`, sorted: sync and
   * close finish a committed one without reading every resolution.
   */
  applying: string[];
};

/** Path of the summary. */
export function summaryPath(paths: StorePaths): string {
  return paths.folder(SUMMARY_NAME);
}

/**
 * Drops the summary after a full check found damage, so the next sync or close
 * cannot take the fast path past it (the summary is derived; deleting is safe).
 */
export function forgetSummary(paths: StorePaths): void {
  try {
    Deno.removeSync(summaryPath(paths));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/** The summary's raw text, or null. */
export function loadSummaryText(paths: StorePaths): string | null {
  const info = lstatOrNull(summaryPath(paths));
  if (!info || !info.isFile) return null;
  try {
    return Deno.readTextFileSync(summaryPath(paths));
  } catch {
    return null;
  }
}

/** The summary, or null when missing, unreadable or of another schema. */
export function loadSummary(paths: StorePaths): Summary | null {
  const text = loadSummaryText(paths);
  if (text === null) return null;
  try {
    const doc = JSON.parse(text) as Summary;
    if (
      doc?.schema !== SUMMARY_SCHEMA || typeof doc.folders !== "object" || !doc.folders ||
      !Array.isArray(doc.held) || !Array.isArray(doc.applying)
    ) {
      return null;
    }
    return doc;
  } catch {
    return null;
  }
}

/**
 * The held decision IDs when the summary still describes the decisions
 * folder (no decision added, removed or replaced since the engine recorded
 * it); null means: read every decision.
 */
export function knownHeldDecisions(paths: StorePaths): string[] | null {
  const summary = loadSummary(paths);
  if (!summary) return null;
  const print = folderPrint(paths, "decisions");
  return print !== null && summary.folders.decisions === print ? summary.held : null;
}

function runIdNumber(run: string): number {
  return RUN_ID.test(run) ? Number(run.slice(1)) : -1;
}

/** Fingerprints of every watched authority folder, or null when one cannot be read. */
export function folderPrints(paths: StorePaths): Record<string, string> | null {
  const out: Record<string, string> = {};
  for (const folder of WATCHED_FOLDERS) {
    const print = folderPrint(paths, folder);
    if (print === null) return null;
    out[folder] = print;
  }
  return out;
}

/** The active runs with their bases as the summary records them (`R000001:12,...`). */
export function activeKey(state: State, without: string | null = null): string {
  return Object.keys(state.active_runs).filter((r) => r !== without).sort()
    .map((r) => `${r}:${state.active_runs[r].base_revision}`).join(",");
}

/** Stores whose summary vouched for every folder before this start created its run's log. */
const provenBeforeStart = new WeakSet<Store>();

/**
 * Call under the engine lock before `startRun`: records whether the summary
 * vouches for the store before the run's log is created, so the new log can
 * be the one explained change of the log folder afterwards. Without this
 * proof the folder's new fingerprint could hide another change made there
 * since the last healthy write (a log removed or added by someone else).
 */
export function proveBeforeStart(store: Store): void {
  if (summaryMatches(store, null) !== null) provenBeforeStart.add(store);
}

/** True when this start found the store exactly as the engine's last healthy write left it (`proveBeforeStart`). */
export function unchangedSinceHealthyWrite(store: Store): boolean {
  return provenBeforeStart.has(store);
}

/**
 * True when the summary proves that no authority folder changed since the
 * engine's last healthy write. `ownStart` names the run this `start` just
 * created, whose new log is the one explained change, provided the summary
 * vouched for the log folder before that log was created (`proveBeforeStart`).
 */
export function summaryMatches(store: Store, ownStart: string | null): Summary | null {
  const summary = loadSummary(store.paths);
  const prints = folderPrints(store.paths);
  if (!summary || !prints) return null;
  const state = store.state;
  if (summary.conflict_count !== state.conflict_count) return null;
  let explainedLog = false;
  if (ownStart !== null && summary.run_count + 1 === state.run_count) {
    const own = state.active_runs[ownStart];
    explainedLog = provenBeforeStart.has(store) && own !== undefined &&
      runIdNumber(ownStart) === state.run_count &&
      own.base_revision === store.head.revision &&
      summary.active === activeKey(state, ownStart) &&
      lstatOrNull(store.paths.log(ownStart))?.isFile === true;
    if (!explainedLog) return null;
  } else if (summary.run_count !== state.run_count || summary.active !== activeKey(state)) {
    return null;
  }
  for (const folder of WATCHED_FOLDERS) {
    if (folder === "log" && explainedLog) continue;
    if (summary.folders[folder] !== prints[folder]) return null;
  }
  return summary;
}

/**
 * The whole everyday check of a read on a store with no active run: the
 * summary vouches for every folder and there is no active run whose records
 * everyday.ts `activeRunIssues` would have to validate. False means: take
 * `everydayVouches` (or the full check), never that the store is damaged.
 */
export function idleStoreVouched(store: Store): boolean {
  return Object.keys(store.state.active_runs).length === 0 && summaryMatches(store, null) !== null;
}

/**
 * True when the summary on disk names at least one active run (or cannot be
 * read): a read then loads everyday.ts up front rather than opening the store twice.
 */
export function summaryNamesActiveRuns(paths: StorePaths): boolean {
  const summary = loadSummary(paths);
  return summary === null || summary.active !== "";
}
