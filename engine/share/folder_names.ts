/**
 * The share folder read by names alone (nothing opened): its replica
 * folders, the record seqs each holds, and which of another replica's
 * records this clone has not imported. scan.ts builds its problems and
 * chains on it; idle.ts counts waiting records with it at an everyday start.
 */
import { join } from "../store/os_path.ts";
import { KEY_FILE, RECORD_NAME, REPLICA_ID } from "./ids.ts";

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
    if (seq >= 1) seqs.push(seq);
  }
  return { seqs: seqs.sort((a, b) => a - b), notRecords };
}

/** The seqs of `seqs` not imported yet: past `done` (the vector) and not imported past a gap. */
export function waitingSeqs(seqs: number[], done: number, ahead: ReadonlySet<number>): number[] {
  return seqs.filter((s) => s > done && !ahead.has(s));
}
