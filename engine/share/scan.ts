/**
 * Reading `.bimri-share/`: which records of other replicas wait to be
 * imported, each checked strictly before it is used; bad input (an unknown
 * folder name, a stray or path-escaping file name, a malformed, truncated,
 * tampered or oversized record, a vector that goes backwards) is reported by
 * file, and only records that depend on it wait.
 */
import { join } from "../store/os_path.ts";
import { readFileNoFollow, requireRealFolder } from "./safe_read.ts";
import { forgetPublishedKeys, signatureChecksLoaded, signatureProblem } from "./sign.ts";
import {
  folderMtime,
  isReplicaFolder,
  isShareFolderExtra,
  type ListedFolder,
  listFolder,
  replicaSeqs,
  waitingSeqs,
} from "./folder_names.ts";
import { claimProblem } from "./governance.ts";
import { visible } from "../model/visible.ts";
import {
  parseRecordBytes,
  RECORD_MAX_BYTES,
  recordHash,
  RecordProblem,
  type ShareRecord,
} from "./record.ts";
import { seenVector, SHARE_FOLDER } from "./state.ts";
import type { ShareContext } from "./context.ts";
import { backwardsEntry, type Vector } from "./vector.ts";
import { screenRecord } from "../guard/share_record.ts";

/** One refused file or folder. */
export type ShareProblem = {
  file: string;
  message: string;
  /** A record its replica did not sign (sign.ts). */
  unsigned?: boolean;
};

/** What the share folder holds beyond what this replica has seen. */
export type ShareScan = {
  /** Valid records waiting, per replica, in seq order (refused files left out). */
  pending: Map<string, ShareRecord[]>;
  problems: ShareProblem[];
  /** Every replica folder: its highest seq file name, and its mtime and record seqs as listed. */
  replicas: (ListedFolder & { newest: number; own: boolean })[];
  /** Record files on disk not imported yet, per other replica. */
  waiting: Map<string, number>;
  /** Missing seqs below a replica's newest record (a record git has not brought). */
  gaps: ShareGap[];
};

/**
 * Seqs missing from a replica's folder while later ones are present: the
 * first few (`missing`, at most GAP_NAMED) and how many in all (`count`).
 */
export type ShareGap = { replica: string; missing: number[]; count: number; since: string | null };

/** How many missing seqs a gap names; the rest are counted. */
export const GAP_NAMED = 8;

/**
 * The seqs missing below `last` (past `done`, neither present nor imported
 * ahead): the first GAP_NAMED of them, their count, and the seq present right
 * after the first of them. Pushed file names choose the numbers (a lone
 * `99999999.json` leaves 10^8 missing), so the gaps are measured between the
 * seqs present, never enumerated: the work is bounded by the files in the
 * folder. `passedBefore(seq)` says how many seqs right before present `seq`
 * its record says its author passed over (record.ts `passed`): those are no
 * gap, since no record of the replica was ever written there.
 */
export function missingSeqs(
  seqs: readonly number[],
  done: number,
  ahead: ReadonlySet<number>,
  last: number,
  passedBefore: (seq: number) => number = () => 0,
): { first: number[]; count: number; after: number | null } {
  const first: number[] = [];
  let count = 0;
  let after: number | null = null;
  let expect = done + 1;
  const marks = [...new Set([...seqs, ...ahead])].filter((s) => s > done && s <= last);
  for (const seq of marks.sort((a, b) => a - b)) {
    if (seq > expect) {
      const to = seq - 1 - passedBefore(seq);
      if (to >= expect) {
        count += to - expect + 1;
        after ??= seq;
        for (let s = expect; s <= to && first.length < GAP_NAMED; s++) first.push(s);
      }
    }
    expect = seq + 1;
  }
  return { first, count, after };
}

function display(...parts: string[]): string {
  // Names come from the pushed folder: shown with hazardous characters escaped.
  return visible([SHARE_FOLDER, ...parts].join("/"));
}

/** The seq numbers in a replica folder, with problems for names that are not records. */
function recordSeqs(ctx: ShareContext, replica: string, problems: ShareProblem[]): number[] {
  const { seqs, notRecords } = replicaSeqs(ctx.shareDir, replica);
  for (const name of notRecords) {
    problems.push({
      file: display(replica, name),
      message: name === "00000000.json"
        ? "is not a record file (record numbers start at 00000001)"
        : "is not a record file (expected NNNNNNNN.json, a regular file)",
    });
  }
  return seqs;
}

/** Parses record `seq` of `replica`, or a problem. */
export function readRecordFile(
  ctx: ShareContext,
  replica: string,
  seq: number,
): ShareRecord | ShareProblem {
  const record = readRecordUnsigned(ctx, replica, seq);
  if (isProblem(record)) return record;
  const file = display(replica, `${String(seq).padStart(8, "0")}.json`);
  const unsigned = signatureProblem(ctx, replica, seq, recordHash(record), record.signature);
  if (unsigned !== null) return { file, message: unsigned, unsigned: true };
  const claim = claimProblem(record);
  return claim === null ? record : { file, message: claim };
}

/** Parses record `seq` of `replica` without checking its signature or claims, or a problem. */
function readRecordUnsigned(
  ctx: ShareContext,
  replica: string,
  seq: number,
): ShareRecord | ShareProblem {
  const name = `${String(seq).padStart(8, "0")}.json`;
  const file = display(replica, name);
  const read = readFileNoFollow(join(ctx.shareDir, replica), name, RECORD_MAX_BYTES);
  if (read === null) return { file, message: "is missing" };
  if ("problem" in read) return { file, message: read.problem };
  try {
    return parseRecordBytes(read.bytes, replica, seq);
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
  const scan: ShareScan = {
    pending: new Map(),
    problems: [],
    replicas: [],
    waiting: new Map(),
    gaps: [],
  };
  requireRealFolder(ctx.shareDir, SHARE_FOLDER);
  forgetPublishedKeys();
  for (const entry of listFolder(ctx.shareDir).sort((a, b) => a.name < b.name ? -1 : 1)) {
    if (isShareFolderExtra(entry)) continue; // a README or git's own files
    if (!isReplicaFolder(entry)) {
      scan.problems.push({
        file: display(entry.name),
        message: "is not a replica folder (expected 26 lowercase base32 characters, a folder)",
      });
      continue;
    }
    const replica = entry.name;
    // Before the listing: a record added while it runs moves the mtime a later look compares.
    const mtime = folderMtime(join(ctx.shareDir, replica));
    const seqs = recordSeqs(ctx, replica, scan.problems);
    scan.replicas.push({
      replica,
      newest: seqs.length ? seqs[seqs.length - 1] : 0,
      own: own.has(replica) && replica === ctx.state.replica,
      mtime,
      seqs,
    });
    if (replica === ctx.state.replica) continue;
    const done = seen[replica] ?? 0;
    const ahead = new Set(ctx.state.ahead[replica] ?? []);
    const waiting = waitingSeqs(seqs, done, ahead);
    if (waiting.length === 0) continue;
    // The record right after a missing run: it may say its author passed over
    // that run, and it was written after it ("since" its time). A count at an
    // everyday verb's start has no signature check loaded: both are then the
    // record's own claims, shown only (nothing of it is imported; a pull checks).
    const afterGap = new Map<number, ShareRecord | ShareProblem>();
    const readAfter = (seq: number): ShareRecord | ShareProblem => {
      let read = afterGap.get(seq);
      if (read === undefined) {
        read = options.countOnly && !signatureChecksLoaded()
          ? readRecordUnsigned(ctx, replica, seq)
          : readRecordFile(ctx, replica, seq);
        afterGap.set(seq, read);
      }
      return read;
    };
    const gap = missingSeqs(seqs, done, ahead, waiting[waiting.length - 1], (seq) => {
      const read = readAfter(seq);
      return isProblem(read) ? 0 : read.passed ?? 0;
    });
    if (gap.after !== null) {
      const after = readAfter(gap.after);
      scan.gaps.push({
        replica,
        missing: gap.first,
        count: gap.count,
        since: isProblem(after) ? null : after.at,
      });
    }
    scan.waiting.set(replica, waiting.length);
    if (options.countOnly) continue;
    const chain: ShareRecord[] = [];
    let previous: Vector | null = null;
    if (done > 0) {
      const before = readRecordFile(ctx, replica, done);
      previous = isProblem(before) ? null : before.vector;
    }
    // Past a gap the chain goes on: a record whose key does not depend on the
    // missing one is imported now (import.ts decides, per key).
    for (const seq of waiting) {
      const read: ShareRecord | ShareProblem = screenRecord( // no credential or hidden character enters memory
        ctx.paths.root,
        display(replica, `${String(seq).padStart(8, "0")}.json`),
        readRecordFile(ctx, replica, seq),
      );
      // A refused file holds back none of the replica's later records: each is
      // signed and checked on its own, and import_order.ts holds what depends
      // on the refused seq as it holds what depends on a missing one.
      if (isProblem(read)) {
        scan.problems.push(read);
        continue;
      }
      // Vectors only grow along a replica's records: compared with the last one accepted.
      const back = previous === null ? null : backwardsEntry(previous, read.vector);
      if (back !== null) {
        scan.problems.push({
          file: display(replica, `${String(seq).padStart(8, "0")}.json`),
          message: `its vector goes backwards for replica ${back}`,
        });
        continue;
      }
      previous = read.vector;
      chain.push(read);
    }
    if (chain.length > 0) scan.pending.set(replica, chain);
  }
  if (!options.countOnly) refuseUnseenEvents(ctx, scan, seen);
  return scan;
}

/**
 * Refuses every pending record whose vector names another replica's event
 * that this clone does not hold (no such record file, imported or present,
 * nor written here): a record's replica could not have seen it, since git
 * brings what a clone saw together with what it wrote. A forged vector would
 * otherwise make a concurrent edit look seen and replace it silently. Like
 * any refused file, it is read again on the next pull (records that arrive
 * then may make it valid) and holds back only what depends on it.
 */
function refuseUnseenEvents(ctx: ShareContext, scan: ShareScan, seen: Vector): void {
  const newest = new Map(scan.replicas.map((r) => [r.replica, r.newest]));
  const holds = (replica: string) =>
    Math.max(
      newest.get(replica) ?? 0,
      seen[replica] ?? 0,
      replica === ctx.state.replica ? ctx.state.nextSeq - 1 : 0,
    );
  for (const [replica, chain] of scan.pending) {
    const kept = chain.filter((record) => {
      for (const [other, seq] of Object.entries(record.vector)) {
        if (other === record.replica || seq <= holds(other)) continue;
        scan.problems.push({
          file: display(replica, `${String(record.seq).padStart(8, "0")}.json`),
          message:
            `claims in its vector to have seen ${other}:${seq}, which this clone does not hold (${
              holds(other) === 0
                ? "no record of that replica"
                : `its records go up to ${holds(other)}`
            }): a record names only events its replica could have seen (refused until they arrive, if ever)`,
        });
        return false;
      }
      return true;
    });
    if (kept.length === 0) scan.pending.delete(replica);
    else scan.pending.set(replica, kept);
  }
}

/** How many records of other replicas wait to be pulled (file names only, nothing parsed). */
export function countWaiting(ctx: ShareContext): number {
  return totalWaiting(scanShare(ctx, { countOnly: true }));
}

/** Records on disk not imported yet, over every other replica. */
export function totalWaiting(scan: ShareScan): number {
  let n = 0;
  for (const count of scan.waiting.values()) n += count;
  return n;
}

/** One line per gap: the replica, the missing seqs, since when, and the next step. */
export function gapLines(scan: ShareScan): string[] {
  return scan.gaps.map((g) => {
    const named = g.missing.slice(0, GAP_NAMED);
    const seqs = g.count > named.length
      ? `${named.join(", ")} and ${g.count - named.length} more (${g.count} in all)`
      : named.join(", ");
    return `BIMRI SHARE GAP: replica ${g.replica} is missing record${
      g.count === 1 ? "" : "s"
    } ${seqs}${
      g.since ? ` (since ${g.since} or earlier)` : ""
    }; only records whose key depends on it wait. Next step: in the clone that wrote replica ${g.replica}, run any bimri command (it restores its own records), commit .bimri-share/ and push; then git pull and \`bimri share pull\` here.`;
  });
}

/** The message a refused file gets. */
export function problemMessage(problem: ShareProblem): string {
  return `share record ${problem.file} ${problem.message}; nothing was imported from it (the other records are unaffected). Restore it from git history or remove it, then run \`bimri share pull\` again.`;
}

/** How many refused files one command names; the rest are counted in one line. */
export const PROBLEMS_NAMED = 20;

/**
 * The refused files a command names (the first PROBLEMS_NAMED) and how many
 * more there are: a pusher can commit any number of junk files, and each
 * command's output stays bounded while every one is still counted.
 */
export function namedProblems(problems: readonly ShareProblem[]): {
  named: ShareProblem[];
  more: number;
} {
  return {
    named: problems.slice(0, PROBLEMS_NAMED),
    more: Math.max(0, problems.length - PROBLEMS_NAMED),
  };
}

/** The line that counts the refused files not named (null: every one is named). */
export function moreProblemsLine(problems: readonly ShareProblem[]): string | null {
  const { more } = namedProblems(problems);
  if (more === 0) return null;
  return `share records: ${more} more refused files under ${SHARE_FOLDER}/ are not named here (${problems.length} in all); remove or restore the ones named, and the next command names the next ${PROBLEMS_NAMED}.`;
}
