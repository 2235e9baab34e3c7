/**
 * The share folder read by names alone (nothing opened): its replica
 * folders, the record seqs each holds, and which of another replica's
 * records this clone has not imported. scan.ts builds its problems and
 * chains on it; idle.ts counts waiting records with it at an everyday start,
 * passing over the folders a pull found quiet (nothing waiting) and that
 * have not changed since.
 */
import { join } from "../store/os_path.ts";
import { lstatOrNull } from "../store/files.ts";
import { KEY_FILE, RECORD_NAME, recordName, REPLICA_ID } from "./ids.ts";

/** The entries of a folder (empty when it does not exist). */
export function listFolder(path: string): Deno.DirEntry[] {
  try {
    return [...Deno.readDirSync(path)];
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return [];
    }
    throw error;
  }
}

/** True for what `.bimri-share/` may hold beside replica folders: a README, git's own files. */
export function isShareFolderExtra(entry: Deno.DirEntry): boolean {
  return entry.name.startsWith(".") || (entry.isFile && /^[A-Za-z0-9._-]+\.md$/.test(entry.name));
}

/** True when `entry` of `.bimri-share/` is a replica folder (a real folder with a replica ID name). */
export function isReplicaFolder(entry: Deno.DirEntry): boolean {
  return REPLICA_ID.test(entry.name) && entry.isDirectory && !entry.isSymlink;
}

/** The record seqs in a replica folder, in order, and the names there that are not records. */
export function replicaSeqs(
  shareDir: string,
  replica: string,
): { seqs: number[]; notRecords: string[] } {
  const seqs: number[] = [];
  const notRecords: string[] = [];
  for (const entry of listFolder(join(shareDir, replica))) {
    if (entry.name.startsWith(".")) continue; // editors' and git's own hidden files
    if (entry.name === KEY_FILE && entry.isFile && !entry.isSymlink) continue; // sign.ts
    if (!RECORD_NAME.test(entry.name) || !entry.isFile || entry.isSymlink) {
      notRecords.push(entry.name);
      continue;
    }
    const seq = Number(entry.name.slice(0, 8));
    // 00000000.json names no record (seqs start at 1): refused by name, never silently ignored.
    if (seq >= 1) seqs.push(seq);
    else notRecords.push(entry.name);
  }
  return { seqs: seqs.sort((a, b) => a - b), notRecords };
}

/** The seqs of `seqs` not imported yet: past `done` (the vector) and not imported past a gap. */
export function waitingSeqs(seqs: number[], done: number, ahead: ReadonlySet<number>): number[] {
  return seqs.filter((s) => s > done && !ahead.has(s));
}

/** The modification time of `folder` in ms, or null when it is missing. */
export function folderMtime(folder: string): number | null {
  return lstatOrNull(folder)?.mtime?.getTime() ?? null;
}

/**
 * True when another replica's folder surely holds no record waiting, known
 * without listing it: it still has the mtime a pull recorded when none was
 * (`quiet`), and the record after the last one imported (`done`) is absent,
 * which also catches a record added within the mtime's resolution of the
 * pull's look.
 */
export function stillQuiet(
  shareDir: string,
  replica: string,
  quiet: number | undefined,
  done: number,
): boolean {
  if (quiet === undefined) return false;
  const folder = join(shareDir, replica);
  return folderMtime(folder) === quiet && lstatOrNull(join(folder, recordName(done + 1))) === null;
}

/** A replica folder as a scan listed it: its mtime taken before the listing, and its record seqs. */
export type ListedFolder = { replica: string; mtime: number | null; seqs: number[] };

/**
 * The quiet folders after a pull (pure): each folder of another replica (not
 * one of `own`) that holds no record waiting now, with the mtime its scan
 * took before listing it (a record added since changes the mtime a later
 * look compares). A folder with records waiting keeps what `previous` noted:
 * its mtime has moved since, so the note no longer passes it over, and a pull
 * that imports nothing leaves the bookkeeping as it was.
 */
export function quietFolders(
  listed: readonly ListedFolder[],
  own: ReadonlySet<string>,
  seen: Readonly<Record<string, number>>,
  ahead: Readonly<Record<string, number[]>>,
  previous: Readonly<Record<string, number>>,
): Record<string, number> {
  const quiet: Record<string, number> = {};
  for (const { replica, mtime, seqs } of listed) {
    if (own.has(replica) || mtime === null) continue;
    const waiting = waitingSeqs(seqs, seen[replica] ?? 0, new Set(ahead[replica] ?? []));
    if (waiting.length === 0) quiet[replica] = mtime;
    else if (previous[replica] !== undefined) quiet[replica] = previous[replica];
  }
  return quiet;
}
