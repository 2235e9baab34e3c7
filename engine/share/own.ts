/**
 * This clone's own replica folder: a file there counts as this clone's record
 * only when it is exactly what this clone wrote, which its signature by the
 * private key only this clone holds (`.bimri/share-key.local.json`) proves;
 * anything else found there is refused by name, and exports go on at the
 * next free seq.
 */
import { join } from "../store/os_path.ts";
import { recordName } from "./ids.ts";
import { parseRecordBytes, RECORD_MAX_BYTES, recordHash, type ShareRecord } from "./record.ts";
import { readFileNoFollow } from "./safe_read.ts";
import { ownPublicKey, publishedKey, signedByThisClone } from "./sign.ts";
import type { ShareContext } from "./context.ts";
import { visible } from "../model/visible.ts";

/** What lies at one seq of this clone's own folder. */
export type OwnSlot = { kind: "absent" } | {
  kind: "own";
  record: ShareRecord;
  /** The file's exact bytes (what a restore writes back). */
  bytes: Uint8Array;
} | {
  kind: "foreign";
  file: string;
  why: string;
};

/** What this clone's own folder holds at `seq`. */
export function ownSlot(ctx: ShareContext, seq: number): OwnSlot {
  const replica = ctx.state.replica;
  const name = recordName(seq);
  const file = `${SHARE_FOLDER}/${replica}/${name}`;
  const read = readFileNoFollow(join(ctx.shareDir, replica), name, RECORD_MAX_BYTES);
  if (read === null) return { kind: "absent" };
  if ("problem" in read) return { kind: "foreign", file, why: read.problem };
  let record: ShareRecord;
  try {
    record = parseRecordBytes(read.bytes, replica, seq);
  } catch (error) {
    return { kind: "foreign", file, why: error instanceof Error ? error.message : String(error) };
  }
  if (
    record.signature === undefined ||
    !signedByThisClone(ctx, recordHash(record), record.signature)
  ) {
    return { kind: "foreign", file, why: "is not signed by this clone's key" };
  }
  return { kind: "own", record, bytes: read.bytes };
}

/**
 * What this clone's own folder holds at an already exported `seq` (below the
 * export cursor): as ownSlot, and an unsigned record below the `from_seq` of
 * this clone's own published key is its own too (written by an earlier bimri
 * before the replica had a key, as other clones accept it).
 */
export function exportedOwnSlot(ctx: ShareContext, seq: number): OwnSlot {
  const slot = ownSlot(ctx, seq);
  if (slot.kind !== "foreign" || seq >= ctx.state.nextSeq) return slot;
  const key = publishedKey(ctx, ctx.state.replica);
  if (typeof key !== "object" || key === null || key.publicKey !== ownPublicKey(ctx)) return slot;
  if (seq >= key.fromSeq) return slot;
  const read = readFileNoFollow(
    join(ctx.shareDir, ctx.state.replica),
    recordName(seq),
    RECORD_MAX_BYTES,
  );
  if (read === null || "problem" in read) return slot;
  try {
    const record = parseRecordBytes(read.bytes, ctx.state.replica, seq);
    return record.signature === undefined ? { kind: "own", record, bytes: read.bytes } : slot;
  } catch {
    return slot;
  }
}

const SHARE_FOLDER = ".bimri-share";
const reported = new Set<string>();
/** Refusal lines noted and not yet taken by the command that prints them. */
const notices: string[] = [];

/**
 * Notes a file in this clone's own folder that this clone did not write,
 * once per process, as a `BIMRI ERROR` line for the command to print on
 * stderr (`takeForeignNotices`; the command itself goes on: the export takes
 * the next free seq).
 */
export function reportForeign(slot: { file: string; why: string }): void {
  if (reported.has(slot.file)) return;
  reported.add(slot.file);
  const line = `BIMRI ERROR: ${
    visible(slot.file)
  } lies in this clone's own replica folder but was not written by this clone (${
    visible(slot.why)
  }); it was not adopted, and this clone's records go on at the next free number. Remove it from git (\`git rm ${
    visible(slot.file)
  }\`) and commit.`;
  if (notices.length < FOREIGN_NAMED) notices.push(line);
  else unnamed++;
}

/** Foreign files one command names; a pusher's thousands are counted in one line. */
const FOREIGN_NAMED = 20;

/** Foreign files reported past FOREIGN_NAMED since the last `takeForeignNotices`. */
let unnamed = 0;

/** The refusal lines noted since the last call (the command layer prints them on stderr). */
export function takeForeignNotices(): string[] {
  const lines = notices.splice(0);
  if (unnamed > 0) {
    lines.push(
      `BIMRI ERROR: ${unnamed} more files in this clone's own replica folder were not written by this clone and were passed over too; \`bimri share status\` counts them. Remove them from git and commit.`,
    );
    unnamed = 0;
  }
  return lines;
}

/** The most foreign files passed over in a row before the seq is taken as free. */
const FOREIGN_RUN_MAX = 64;

/**
 * This clone's own record at `seq` or past foreign files right after it
 * (reported), or null when the slot is free.
 */
export function ownRecordAfterForeign(
  ctx: ShareContext,
  seq: number,
): { record: ShareRecord; seq: number } | null {
  const foreign: { file: string; why: string }[] = [];
  for (let at = seq; at < seq + FOREIGN_RUN_MAX; at++) {
    const slot = ownSlot(ctx, at);
    if (slot.kind === "absent") return null;
    if (slot.kind === "own") {
      for (const f of foreign) reportForeign(f);
      return { record: slot.record, seq: at };
    }
    foreign.push(slot);
  }
  return null;
}
