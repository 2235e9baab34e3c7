/**
 * An author never loses its own records: every record this replica writes is
 * also kept, byte for byte, under `.bimri/share-sent/<replica>/` (local, out
 * of git). When git takes a record out of the working tree before it was
 * committed (stash -u then drop, clean -fdx, reset --hard, a branch switch or
 * an abandoned branch), the next locked command writes it again from the
 * kept bytes, so a later merge that brings the same file back adds nothing.
 * On the everyday path this costs one directory listing compared with the
 * export cursor.
 */
import { join } from "../store/os_path.ts";
import { atomicReplace, createExclusive, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { gitOperationInProgress } from "../store/git_tree.ts";
import { RECORD_NAME, recordName } from "./ids.ts";
import { folderMtime } from "./folder_names.ts";
import { exportedOwnSlot } from "./own.ts";
import { readFileNoFollow, requireRealFolder } from "./safe_read.ts";
import { RECORD_MAX_BYTES } from "./record.ts";
import { noteShare } from "./notice.ts";
import { restoreOwnKey } from "./sign.ts";
import type { ShareContext } from "./context.ts";

/** `.bimri/share-sent/<replica>`: the kept bytes of this replica's records. */
export function keptFolder(ctx: ShareContext, replica = ctx.state.replica): string {
  return join(ctx.paths.dir, "share-sent", replica);
}

/**
 * Keeps the exact bytes of own record `seq` (idempotent): a hard link to the
 * record file when `recordPath` is given and the file system allows it (no
 * data written; git removes a file by unlinking it, so the kept name still
 * holds the bytes), else a copy.
 */
export function keepRecord(
  ctx: ShareContext,
  seq: number,
  bytes: Uint8Array | string,
  recordPath?: string,
): void {
  const folder = keptFolder(ctx);
  if (lstatOrNull(folder) === null) Deno.mkdirSync(folder, { recursive: true });
  const path = join(folder, recordName(seq));
  if (lstatOrNull(path) !== null) return;
  if (recordPath !== undefined) {
    try {
      Deno.linkSync(recordPath, path);
      return;
    } catch { /* another file system, or no hard links: copy */ }
  }
  atomicReplace(path, bytes);
}

/** The suffix of a kept marker naming a seq this clone passed over (a file it did not write lay there). */
const PASSED_SUFFIX = ".passed";

/**
 * Notes that own seq `seq` was passed over because a file this clone did not
 * write lay there (own.ts): it holds no record of this clone, so a restore
 * neither writes it back nor calls it lost.
 */
export function notePassed(ctx: ShareContext, seq: number): void {
  const folder = keptFolder(ctx);
  if (lstatOrNull(folder) === null) Deno.mkdirSync(folder, { recursive: true });
  const path = join(folder, recordName(seq) + PASSED_SUFFIX);
  if (lstatOrNull(path) === null) atomicReplace(path, "");
}

/** True when own seq `seq` was passed over (notePassed). */
export function wasPassed(ctx: ShareContext, seq: number): boolean {
  return lstatOrNull(join(keptFolder(ctx), recordName(seq) + PASSED_SUFFIX)) !== null;
}

/** Record seq numbers named in a folder (not read), and passed-over markers. */
function seqsIn(folder: string, passed?: Set<number>): Set<number> {
  const out = new Set<number>();
  try {
    for (const entry of Deno.readDirSync(folder)) {
      if (RECORD_NAME.test(entry.name)) out.add(Number(entry.name.slice(0, 8)));
      else if (passed && RECORD_NAME.test(entry.name.slice(0, -PASSED_SUFFIX.length))) {
        if (entry.name.endsWith(PASSED_SUFFIX)) passed.add(Number(entry.name.slice(0, 8)));
      }
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return out;
}

/** What `restoreOwnRecords` did. */
export type RestoreResult = { restored: number; lost: number[]; key?: boolean };

/**
 * Re-writes every own record (seq below the export cursor) missing from
 * `.bimri-share/<replica>/` from its kept bytes. Records written before
 * bytes were kept are kept now from the working tree (once). Returns how
 * many were restored and which could not be (no kept copy).
 */
export function restoreOwnRecords(ctx: ShareContext): RestoreResult {
  const s = ctx.state;
  const exported = s.nextSeq - 1;
  const result: RestoreResult = { restored: 0, lost: [] };
  if (exported < 1) return result;
  const folder = join(ctx.shareDir, s.replica);
  // One stat on the everyday path: the folder is listed only when it changed
  // since every record was last seen in it (a removal changes its mtime).
  const mtime = folderMtime(folder);
  if (mtime !== null && mtime === s.folderMtime && s.keptThrough >= exported) return result;
  // Mid-rebase (or merge, cherry-pick): git may be about to bring these very
  // files back, and a file written now would stop it; restored after.
  if (gitOperationInProgress(ctx.paths.root)) return result;
  // Never listed or written through a link (safe_read.ts).
  requireRealFolder(ctx.shareDir, ".bimri-share");
  requireRealFolder(folder, `.bimri-share/${s.replica}`);
  // The published key goes with the records: written again from its kept bytes.
  if (restoreOwnKey(ctx)) result.key = true;
  const present = seqsIn(folder);
  let count = 0;
  for (const seq of present) if (seq <= exported) count++;
  if (count === exported && s.keptThrough >= exported) {
    s.folderMtime = result.key ? folderMtime(folder) : mtime;
    return result;
  }
  const passed = new Set<number>();
  const kept = seqsIn(keptFolder(ctx), passed);
  if (count < exported && lstatOrNull(folder) === null) Deno.mkdirSync(folder, { recursive: true });
  let unsure = false;
  for (let seq = 1; seq <= exported; seq++) {
    const path = join(folder, recordName(seq));
    const keptPath = join(keptFolder(ctx), recordName(seq));
    // A seq passed over holds no record of this clone: nothing to keep or restore.
    if (passed.has(seq) && !kept.has(seq)) continue;
    if (!present.has(seq)) {
      const bytes = kept.has(seq) ? readBytesOrNull(keptPath) : null;
      if (bytes === null) {
        result.lost.push(seq);
        continue;
      }
      if (createExclusive(path, bytes)) result.restored++;
    } else if (!kept.has(seq)) {
      // Read bounded and without following links, and kept only when this
      // clone's key signed it (a file someone else put there is not kept).
      const slot = exportedOwnSlot(ctx, seq);
      if (slot.kind === "own") keepRecord(ctx, seq, slot.bytes);
      else unsure = true;
    }
  }
  if (result.lost.length === 0 && !unsure) {
    s.keptThrough = exported;
    s.folderMtime = folderMtime(folder);
  }
  return result;
}

/** The notice a restore prints on stderr (null: nothing to say). */
export function restoreNotice(result: RestoreResult, replica: string): string | null {
  if (result.restored === 0 && result.lost.length === 0 && !result.key) return null;
  const parts: string[] = [];
  if (result.restored > 0 || result.key) {
    const what = result.restored > 0
      ? `${result.restored} team-memory records of this clone${
        result.key ? " and its public key (key.json)" : ""
      }`
      : "this clone's public key (key.json)";
    parts.push(
      `BIMRI: restored ${what} that git had removed from .bimri-share/${replica}/; commit them (git add .bimri-share && git commit).`,
    );
  }
  if (result.lost.length > 0) {
    parts.push(
      `BIMRI: ${result.lost.length} records of this clone (seq ${
        result.lost.join(", ")
      }) are missing from .bimri-share/${replica}/ and no copy is kept; restore them from git history.`,
    );
  }
  return parts.join(" ");
}

/** One of this clone's exported records whose file no longer holds the bytes it wrote. */
export type AlteredRecord = { seq: number; file: string };

/**
 * This clone's exported records present in `.bimri-share/<replica>/` but no
 * longer byte-identical to their kept copies (a pusher altered them; another
 * clone refuses them by their signature). Reads every own record, so only
 * `share status` (also the pre-commit hook), `share pull` and `doctor` call
 * it, never an everyday verb; a record still hard-linked to its kept copy
 * (keepRecord) is the same file and is not read.
 */
export function alteredOwnRecords(ctx: ShareContext): AlteredRecord[] {
  const s = ctx.state;
  const folder = join(ctx.shareDir, s.replica);
  const kept = keptFolder(ctx);
  const altered: AlteredRecord[] = [];
  if (lstatOrNull(folder) === null) return altered;
  requireRealFolder(ctx.shareDir, ".bimri-share");
  requireRealFolder(folder, `.bimri-share/${s.replica}`);
  for (let seq = 1; seq < s.nextSeq; seq++) {
    const name = recordName(seq);
    const keptInfo = lstatOrNull(join(kept, name));
    // Not kept: passed over (no record of this clone), or not kept yet (restoreOwnRecords).
    if (keptInfo === null || !keptInfo.isFile) continue;
    const info = lstatOrNull(join(folder, name));
    if (info === null) continue; // missing: restoreOwnRecords writes it again
    if (info.isFile && info.ino !== null && info.ino === keptInfo.ino) continue;
    const bytes = readBytesOrNull(join(kept, name));
    if (bytes === null) continue;
    const read = readFileNoFollow(folder, name, RECORD_MAX_BYTES);
    if (read !== null && !("problem" in read) && sameBytes(read.bytes, bytes)) continue;
    altered.push({ seq, file: `.bimri-share/${s.replica}/${name}` });
  }
  return altered;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Writes every altered own record (alteredOwnRecords) back from its kept
 * bytes, each named in a `BIMRI ERROR` notice on stderr; not mid-rebase or
 * merge, where git may be about to write these very files. Returns how many
 * were written back.
 */
export function repairAlteredOwnRecords(ctx: ShareContext): number {
  if (ctx.state.nextSeq <= 1 || gitOperationInProgress(ctx.paths.root)) return 0;
  const folder = join(ctx.shareDir, ctx.state.replica);
  let repaired = 0;
  for (const { seq, file } of alteredOwnRecords(ctx)) {
    const bytes = readBytesOrNull(join(keptFolder(ctx), recordName(seq)));
    if (bytes === null) continue;
    let why: string | null = null;
    try {
      // A rename over the path: a link or a swapped file there is replaced, never followed.
      atomicReplace(join(folder, recordName(seq)), bytes);
      repaired++;
    } catch (error) {
      why = error instanceof Error ? error.message : String(error);
    }
    noteShare(
      why === null
        ? `BIMRI ERROR: ${file} was altered after this clone wrote it (it no longer matches the copy kept in .bimri/share-sent/${ctx.state.replica}/; other clones refuse it); it was written back from that copy. Commit it (git add .bimri-share && git commit).`
        : `BIMRI ERROR: ${file} was altered after this clone wrote it and could not be written back (${why}); remove it and run \`bimri share status\` to restore it from .bimri/share-sent/${ctx.state.replica}/.`,
    );
  }
  return repaired;
}
