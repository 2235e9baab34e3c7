/**
 * The list of this clone's changes that everyday commands committed and left
 * for team memory's next export (`.bimri/share-pending.local.txt`, one
 * proposal ID per line). It is a hint, not a record: the decisions under
 * `.bimri/decisions/` are the durable truth, so the line is appended without
 * an fsync, and an export that finds the list short of the head (a crash lost
 * a line, another engine committed) scans the decisions instead (export.ts).
 * Light on purpose: the everyday commands load it without the export.
 */
import { join } from "../store/os_path.ts";
import { lstatOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import { PROPOSAL_ID } from "../model/ids.ts";

/** The hint file's name under `.bimri/`. */
export const PENDING_CHANGES_FILE = "share-pending.local.txt";

/** The most bytes of hints read; a longer list is left to the scan of the decisions. */
const PENDING_READ_MAX = 1 << 20;

function pendingPath(paths: StorePaths): string {
  return join(paths.dir, PENDING_CHANGES_FILE);
}

/**
 * Notes that proposal `proposalId` was committed and not exported. A file
 * that is not a plain file of its own (a link planted in its place) gets no
 * line: the export then scans, and nothing is written through the link.
 */
export function notePendingChange(paths: StorePaths, proposalId: string): void {
  const path = pendingPath(paths);
  const before = lstatOrNull(path);
  if (before !== null && (!before.isFile || before.isSymlink || (before.nlink ?? 1) > 1)) return;
  let file: Deno.FsFile;
  try {
    // A missing file is created exclusively, which no link placed there since can redirect.
    file = before === null
      ? Deno.openSync(path, { write: true, createNew: true })
      : Deno.openSync(path, { append: true });
  } catch {
    return; // a hint lost: the export scans
  }
  try {
    const opened = file.statSync();
    // A swap between the lstat and the open shows as another file here.
    if (before !== null && before.ino !== null && opened.ino !== before.ino) return;
    const line = new TextEncoder().encode(`${proposalId}\n`);
    let written = 0;
    while (written < line.length) written += file.writeSync(line.subarray(written));
  } catch {
    // A hint lost (a full disk): the export scans.
  } finally {
    file.close();
  }
}

/**
 * The proposal IDs noted since the last export, in commit order and without
 * repeats, or null when there is no readable list (then the export scans).
 */
export function readPendingChanges(paths: StorePaths): string[] | null {
  const path = pendingPath(paths);
  const info = lstatOrNull(path);
  if (info === null || !info.isFile || info.isSymlink || info.size > PENDING_READ_MAX) return null;
  let text: string;
  try {
    text = new TextDecoder().decode(Deno.readFileSync(path).subarray(0, PENDING_READ_MAX));
  } catch {
    return null;
  }
  const ids: string[] = [];
  const seen = new Set<string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (!PROPOSAL_ID.test(line)) return null; // not a list bimri wrote: scan
    if (!seen.has(line)) ids.push(line);
    seen.add(line);
  }
  return ids;
}

/** Forgets the hints once everything they name is exported (or is no longer due). */
export function clearPendingChanges(paths: StorePaths): void {
  try {
    Deno.removeSync(pendingPath(paths));
  } catch { /* absent, or removed by the next export */ }
}
