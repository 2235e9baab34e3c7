/**
 * Whether the derived authority summary still vouches for every authority
 * folder since the engine's last healthy write (summaryMatches), kept apart
 * from everyday.ts so a read of a store with no active run loads neither the
 * record schemas nor the per-record checks.
 */
import { lstatOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import type { Store } from "../store/store.ts";
import type { State } from "../model/state.ts";
import { RUN_ID } from "../model/ids.ts";
import { loadSummary, type Summary, WATCHED_FOLDERS } from "./summary.ts";
import { folderPrint } from "../store/fingerprint.ts";

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
