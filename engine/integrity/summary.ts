/**
 * The derived authority summary `.bimri/audit-integrity-summary.json` (see
 * authority.ts, layer 3): folder fingerprints recorded after the engine's own
 * healthy writes, plus the held decision IDs and the applying resolution IDs
 * at that moment. Derived data
 * only: a missing, unreadable or stale summary just means the full scan.
 * Kept apart from authority.ts so read-only retrieval can use it cheaply.
 */
import { lstatOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import { fingerprint } from "../store/fingerprint.ts";

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

/** Fingerprint of one store folder, or null when it is not a real folder. */
export function folderPrint(paths: StorePaths, folder: string): string | null {
  const info = lstatOrNull(paths.folder(folder));
  return info && info.isDirectory && !info.isSymlink ? fingerprint(info) : null;
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
