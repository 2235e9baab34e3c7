/**
 * The checkpoint of the derived history digest (history_digest.ts): where
 * the digest and its checkpoint live, and whether the checkpoint still
 * vouches for the archive as it is. Kept apart from the digest's builder and
 * the search, which both use it.
 */
import { fingerprint, isRacyPrint } from "../integrity/summary.ts";
import { listNames, lstatOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";

const DIGEST_NAME = "audit-integrity-history.tsv";
const CHECKPOINT_NAME = "audit-integrity-history.json";
/** Schema of the checkpoint document. */
export const CHECKPOINT_SCHEMA = 2;

/** The checkpoint: the digest's fingerprint and row count, and each month file's fingerprint. */
export type Checkpoint = {
  schema: number;
  digest: string;
  rows: number;
  months: Record<string, string>;
};

/** Path of the digest file. */
export function digestPath(paths: StorePaths): string {
  return paths.folder(DIGEST_NAME);
}

/** Path of the checkpoint file. */
export function checkpointPath(paths: StorePaths): string {
  return paths.folder(CHECKPOINT_NAME);
}

/** The checkpoint, or null when it is missing, unreadable or of another schema. */
export function readCheckpoint(paths: StorePaths): Checkpoint | null {
  try {
    const doc = JSON.parse(Deno.readTextFileSync(checkpointPath(paths))) as Checkpoint;
    if (
      doc?.schema !== CHECKPOINT_SCHEMA || typeof doc.months !== "object" || doc.months === null
    ) {
      return null;
    }
    return typeof doc.digest === "string" && Number.isInteger(doc.rows) ? doc : null;
  } catch {
    return null;
  }
}

/** The lstat fingerprint of `path`, or null when nothing is there. */
export function printOf(path: string): string | null {
  const info = lstatOrNull(path);
  return info === null ? null : fingerprint(info);
}

/** Names of the archive month files (`2026-12.md`), sorted. */
export function monthNames(paths: StorePaths): string[] {
  return listNames(paths.folder("archive")).filter((name) => name.endsWith(".md"));
}

/**
 * The checkpoint when it vouches for every archive month file as it is now
 * (same names, same lstat fingerprints) and for the digest file itself, else null.
 */
export function vouchingCheckpoint(paths: StorePaths): Checkpoint | null {
  const checkpoint = readCheckpoint(paths);
  if (checkpoint === null) return null;
  const names = monthNames(paths);
  if (names.length !== Object.keys(checkpoint.months).length) return null;
  for (const name of names) {
    const info = lstatOrNull(`${paths.folder("archive")}/${name}`);
    if (info === null || checkpoint.months[name] !== fingerprint(info)) return null;
  }
  const info = lstatOrNull(digestPath(paths));
  return info !== null && info.isFile && fingerprint(info) === checkpoint.digest
    ? checkpoint
    : null;
}

/**
 * True when a rebuilt digest would vouch for the archive but the current one
 * does not: there is an archive, the checkpoint no longer matches it (a copy
 * or clone gives every file a new inode; another engine or an editor appends
 * or changes rows), and no month file changed so recently that its print is
 * racy (then no checkpoint could vouch for it yet). A few lstat calls.
 */
export function historyDigestIsStale(paths: StorePaths): boolean {
  try {
    const names = monthNames(paths);
    if (names.length === 0 || vouchingCheckpoint(paths) !== null) return false;
    return names.every((name) => {
      const print = printOf(`${paths.folder("archive")}/${name}`);
      return print !== null && !isRacyPrint(print);
    });
  } catch {
    return false;
  }
}
