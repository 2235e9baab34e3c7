/**
 * Whether a shared store has anything pending for an everyday command:
 * something to restore, seed or finish, or (at start) records of other
 * clones to count. It is read from the share bookkeeping and a few lstats, so
 * that start, sync and close load no export, signing or pull code when there
 * is nothing for them to do (commands/share_wiring.ts); what it finds pending
 * is left to export.ts's finishPendingExports, which this mirrors. Their own
 * commits are not pending here: they wait for the next export.
 */
import { join } from "../store/os_path.ts";
import { lstatOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import type { Store } from "../store/store.ts";
import { headCommitLeftApplying } from "../memory/commit_finisher.ts";
import { recordName } from "./ids.ts";
import { readShareState, seenVector, shareDir } from "./state_file.ts";
import { pullLeftUnfinished } from "./deferred.ts";
import { samePlace } from "./place.ts";
import {
  folderMtime,
  isReplicaFolder,
  listFolder,
  replicaSeqs,
  stillQuiet,
  waitingSeqs,
} from "./folder_names.ts";
import type { ShareContext } from "./context.ts";

/** A shared store with nothing pending: its context as read (nothing was recovered or saved). */
export type IdleShare = { ctx: ShareContext };

/**
 * The share context of the store at `paths` when nothing is pending for an
 * everyday command, else what is pending (a short reason). With `counting`
 * (start), records of other clones waiting to be pulled count as pending:
 * their count, gaps and trust questions are the full path's. Only reads.
 */
export function idleShare(paths: StorePaths, counting: boolean): IdleShare | { pending: string } {
  let read;
  try {
    read = readShareState(paths);
  } catch {
    return { pending: "unreadable share bookkeeping" }; // the full path says what is wrong
  }
  if (read === null) return { pending: "no replica file" };
  const { state, restarted } = read;
  const ctx: ShareContext = { paths, shareDir: shareDir(paths), state };
  if (restarted) return { pending: "replica re-minted" };
  if (!samePlace(state.storePath, paths.root)) return { pending: "store moved or copied" };
  const folder = lstatOrNull(ctx.shareDir);
  if (folder !== null && (!folder.isDirectory || folder.isSymlink)) {
    return { pending: "share folder is not a folder" };
  }
  if (state.pendingResolution !== null) return { pending: "resolution to export" };
  if (state.seeding) return { pending: "seeding" };
  if (state.pulling || pullLeftUnfinished(ctx)) {
    return { pending: "pull left unfinished" };
  }
  // keep.ts's restoreOwnRecords: the own folder unchanged since every record was seen in it.
  const own = join(ctx.shareDir, state.replica);
  const exported = state.nextSeq - 1;
  if (exported >= 1) {
    const mtime = folderMtime(own);
    if (mtime === null || mtime !== state.folderMtime || state.keptThrough < exported) {
      return { pending: "own records to check" };
    }
  } else if (lstatOrNull(join(own, recordName(state.nextSeq))) !== null) {
    // export.ts's rollForward: a record past the cursor (a crash after its
    // write). Once a record was exported, that file would have changed the
    // folder's mtime since the cursor saved it, which the check above sees.
    return { pending: "record past the export cursor" };
  }
  if (counting && waitingByName(ctx) > 0) return { pending: "records waiting" };
  return { ctx };
}

/**
 * Under the engine lock: what is pending for `store`'s head (its last commit
 * left applying), or null. A head past the one the share bookkeeping saw is
 * not pending here: the everyday commands leave their changes for the next
 * export (export.ts exportOutsideChanges).
 */
export function headPending(store: Store): string | null {
  if (headCommitLeftApplying(store) !== null) return "commit left applying";
  return null;
}

/** Records of other replicas not imported yet, counted by file name (scan.ts's count). */
function waitingByName(ctx: ShareContext): number {
  const seen = seenVector(ctx.state);
  let waiting = 0;
  for (const entry of listFolder(ctx.shareDir)) {
    if (!isReplicaFolder(entry) || entry.name === ctx.state.replica) continue;
    // A folder a pull found quiet and that has not changed since is not listed:
    // a start costs what changed, not the team's whole history.
    const done = seen[entry.name] ?? 0;
    if (stillQuiet(ctx.shareDir, entry.name, ctx.state.quiet[entry.name], done)) continue;
    const { seqs } = replicaSeqs(ctx.shareDir, entry.name);
    const ahead = new Set(ctx.state.ahead[entry.name] ?? []);
    waiting += waitingSeqs(seqs, done, ahead).length;
  }
  return waiting;
}
