/**
 * Reading `.bimri-share/`: which records of other replicas wait to be
 * imported, each checked strictly before it is used; bad input (an unknown
 * folder name, a stray or path-escaping file name, a malformed, truncated,
 * tampered or oversized record, a vector that goes backwards) is reported by
 * file and stops only its own replica's chain.
 */
import { join } from "../store/os_path.ts";
import { lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { RECORD_NAME, REPLICA_ID } from "./ids.ts";
import { parseRecordBytes, RECORD_MAX_BYTES, RecordProblem, type ShareRecord } from "./record.ts";
import { seenVector, SHARE_FOLDER, type ShareContext } from "./state.ts";
import { backwardsEntry, type Vector } from "./vector.ts";

/** One refused file or folder. */
export type ShareProblem = { file: string; message: string };

/** What the share folder holds beyond what this replica has seen. */
export type ShareScan = {
  /** Valid records waiting, per replica, in seq order (each chain stops at a gap or a problem). */
  pending: Map<string, ShareRecord[]>;
  problems: ShareProblem[];
  /** Every replica folder and its highest seq file name. */
  replicas: { replica: string; newest: number; own: boolean }[];
};

function display(...parts: string[]): string {
  return [SHARE_FOLDER, ...parts].join("/");
}

/** Folder names in `.bimri-share/` (empty when it does not exist). */
function listFolder(path: string): Deno.DirEntry[] {
  try {
    return [...Deno.readDirSync(path)];
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return [];
    }
    throw error;
  }
}

/** The seq numbers in a replica folder, with problems for names that are not records. */
function recordSeqs(ctx: ShareContext, replica: string, problems: ShareProblem[]): number[] {
  const seqs: number[] = [];
  for (const entry of listFolder(join(ctx.shareDir, replica))) {
    if (entry.name.startsWith(".")) continue; // editors' and git's own hidden files
    if (!RECORD_NAME.test(entry.name) || !entry.isFile || entry.isSymlink) {
      problems.push({
        file: display(replica, entry.name),
        message: "is not a record file (expected NNNNNNNN.json, a regular file)",
      });
      continue;
    }
    const seq = Number(entry.name.slice(0, 8));
    if (seq >= 1) seqs.push(seq);
  }
  return seqs.sort((a, b) => a - b);
}

/** Parses record `seq` of `replica`, or a problem. */
export function readRecordFile(
  ctx: ShareContext,
  replica: string,
  seq: number,
): ShareRecord | ShareProblem {
  const name = `${String(seq).padStart(8, "0")}.json`;
  const path = join(ctx.shareDir, replica, name);
  const file = display(replica, name);
  const info = lstatOrNull(path);
  if (info === null) return { file, message: "is missing" };
  if (!info.isFile) return { file, message: "is not a regular file" };
  if (info.size > RECORD_MAX_BYTES) {
    return { file, message: `is larger than ${RECORD_MAX_BYTES} bytes (oversized)` };
  }
  const bytes = readBytesOrNull(path);
  if (bytes === null) return { file, message: "is missing" };
  try {
    return parseRecordBytes(bytes, replica, seq);
  } catch (error) {
    if (error instanceof RecordProblem) return { file, message: error.message };
    throw error;
  }
}

/** True when a read gave a problem rather than a record. */
export function isProblem(value: ShareRecord | ShareProblem): value is ShareProblem {
  return "message" in value;
}

/**
 * Scans every other replica's folder for records this replica has not
 * imported. With `countOnly`, records are counted by file name and not read.
 */
export function scanShare(ctx: ShareContext, options: { countOnly?: boolean } = {}): ShareScan {
  const seen: Vector = seenVector(ctx.state);
  const own = new Set([ctx.state.replica, ...ctx.state.retired]);
  const scan: ShareScan = { pending: new Map(), problems: [], replicas: [] };
  for (const entry of listFolder(ctx.shareDir).sort((a, b) => a.name < b.name ? -1 : 1)) {
    if (entry.name.startsWith(".") || (entry.isFile && /^[A-Za-z0-9._-]+\.md$/.test(entry.name))) {
      continue; // a README or git's own files
    }
    if (!REPLICA_ID.test(entry.name) || !entry.isDirectory || entry.isSymlink) {
      scan.problems.push({
        file: display(entry.name),
        message: "is not a replica folder (expected 26 lowercase base32 characters, a folder)",
      });
      continue;
    }
    const replica = entry.name;
    const seqs = recordSeqs(ctx, replica, scan.problems);
    scan.replicas.push({
      replica,
      newest: seqs.length ? seqs[seqs.length - 1] : 0,
      own: own.has(replica) && replica === ctx.state.replica,
    });
    if (replica === ctx.state.replica) continue;
    const done = seen[replica] ?? 0;
    const waiting = seqs.filter((s) => s > done);
    if (waiting.length === 0) continue;
    if (options.countOnly) {
      scan.pending.set(replica, new Array(waiting.length));
      continue;
    }
    const present = new Set(waiting);
    const chain: ShareRecord[] = [];
    let previous: Vector | null = null;
    if (done > 0) {
      const before = readRecordFile(ctx, replica, done);
      previous = isProblem(before) ? null : before.vector;
    }
    for (let seq = done + 1; seq <= waiting[waiting.length - 1]; seq++) {
      if (!present.has(seq)) break; // a gap: the rest arrives with a later git pull
      const read = readRecordFile(ctx, replica, seq);
      if (isProblem(read)) {
        scan.problems.push(read);
        break;
      }
      const back = previous === null ? null : backwardsEntry(previous, read.vector);
      if (back !== null) {
        scan.problems.push({
          file: display(replica, `${String(seq).padStart(8, "0")}.json`),
          message: `its vector goes backwards for replica ${back}`,
        });
        break;
      }
      previous = read.vector;
      chain.push(read);
    }
    if (chain.length > 0) scan.pending.set(replica, chain);
  }
  return scan;
}

/** How many records of other replicas wait to be pulled (file names only, nothing parsed). */
export function countWaiting(ctx: ShareContext): number {
  let n = 0;
  for (const list of scanShare(ctx, { countOnly: true }).pending.values()) n += list.length;
  return n;
}

/** The message a refused file gets. */
export function problemMessage(problem: ShareProblem): string {
  return `share record ${problem.file} ${problem.message}; nothing was imported from it (the other records are unaffected). Restore it from git history or remove it, then run \`bimri share pull\` again.`;
}
