/**
 * Export: every accepted change of a shared store (sync, close, resolve)
 * also becomes one immutable record in `.bimri-share/<replica>/`.
 *
 * Exactly once across crashes: a record is written only after its commit is
 * durable, named by the next seq, created exclusively; the share state
 * (next seq, the key's shared event, the export cursor) is saved after it.
 * Whichever locked command of the store runs next (`finishPendingExports`)
 * finds a commit the head carries but the cursor does not name, or a
 * resolution still marked pending, and exports it then; a record already on
 * disk for the same source is adopted, never written twice.
 */
import { join } from "../store/os_path.ts";
import { BimriError } from "../errors.ts";
import { utcTimestamp } from "../model/time.ts";
import {
  createExclusive,
  listNames,
  lstatOrNull,
  readBytesOrNull,
  readTextOrNull,
} from "../store/files.ts";
import { PROPOSAL_ID } from "../model/ids.ts";
import { faultPoint } from "../store/fault.ts";
import type { Store } from "../store/store.ts";
import type { StorePaths } from "../store/paths.ts";
import {
  commitFinisher,
  CommitFinisherNeeded,
  headCommitLeftApplying,
} from "../memory/commit_finisher.ts";
import { readDecision } from "../records/decision.ts";
import { readProposal } from "../records/proposal.ts";
import { findLive, type LiveGeneration } from "../memory/residency.ts";
import { linesCooledBy } from "../store/archive_month.ts";
import { parseAnyEntry, parseView } from "../model/hot.ts";
import { sharedEntryOf } from "./classify.ts";
import { importFinisher, PullMachineryPending } from "./import_hook.ts";
import { pullLeftUnfinished } from "./deferred.ts";
import { eventId, isImportActor, parseEventId, recordName } from "./ids.ts";
import { parseRecordBytes, recordHash, recordText, type ShareRecord } from "./record.ts";
import { exportedOwnSlot, ownSlot, reportForeign } from "./own.ts";
import { signRecordHash } from "./sign.ts";
import {
  isShared,
  keysOf,
  loadShare,
  saveShare,
  seeHead,
  seenVector,
  SHARE_FOLDER,
} from "./state.ts";
import { sha256Hex } from "../model/text.ts";
import type { ShareContext } from "./context.ts";
import { requireRealFolder } from "./safe_read.ts";
import { sortedVector, vectorCovers } from "./vector.ts";
import { folderMtime } from "./folder_names.ts";
import {
  keepRecord,
  keptFolder,
  notePassed,
  restoreNotice,
  restoreOwnRecords,
  wasPassed,
} from "./keep.ts";
import { noteShare } from "./notice.ts";
import { clearPendingChanges, readPendingChanges } from "./pending_changes.ts";
import { publishableRecord } from "../guard/publish_screen.ts";

/** The most foreign files one export passes over before it stops (each costs a durable marker). */
const FOREIGN_PASS_MAX = 1000;

/** The fields of a record that the caller decides. */
export type RecordDraft = Pick<
  ShareRecord,
  "kind" | "key" | "operation" | "resolves" | "run" | "actor" | "source"
>;

/** Creates the record folder of this replica when missing. */
export function ensureReplicaFolder(ctx: ShareContext): string {
  const folder = join(ctx.shareDir, ctx.state.replica);
  requireRealFolder(ctx.shareDir, SHARE_FOLDER);
  requireRealFolder(folder, `${SHARE_FOLDER}/${ctx.state.replica}`);
  if (lstatOrNull(folder) === null) Deno.mkdirSync(folder, { recursive: true });
  return folder;
}

/**
 * Writes the next record of this replica for `draft` with the key's content
 * at the current head, then saves the share state. A record already on disk
 * under the next seq with the same source (a crash after the write) is
 * adopted instead. Returns the event ID.
 */
export function writeNextRecord(
  store: Store,
  ctx: ShareContext,
  draft: RecordDraft,
  at?: ChangeAt,
): string {
  const s = ctx.state;
  const keys = keysOf(ctx);
  const folder = ensureReplicaFolder(ctx);
  let seq = s.nextSeq;
  // A file this clone did not write is refused and passed over (own.ts).
  let slot = ownSlot(ctx, seq);
  const first = seq;
  while (slot.kind === "foreign") {
    if (seq - first >= FOREIGN_PASS_MAX) {
      // A pusher filled the numbers ahead: each pass costs a durable marker, so
      // the export stops; the change stays committed and is exported once they are gone.
      throw new BimriError(
        "refused",
        `more than ${FOREIGN_PASS_MAX} files this clone did not write lie at its next record numbers in .bimri-share/${s.replica}/ (from ${
          recordName(first)
        }); nothing more was exported, and the change stays committed here. Remove them (\`git rm\` them) and commit; the next command exports it.`,
      );
    }
    reportForeign(slot);
    notePassed(ctx, seq);
    if (s.keptThrough === seq - 1) s.keptThrough = seq;
    slot = ownSlot(ctx, ++seq);
  }
  const path = join(folder, recordName(seq));
  const event = eventId(s.replica, seq);
  // What this clone keeps under .bimri/ to restore the file if git removes it (keep.ts).
  let bytes: Uint8Array | string = slot.kind === "own" ? recordText(slot.record) : "";
  if (slot.kind === "own") {
    if (slot.record.source !== draft.source) {
      throw new BimriError(
        "store-corrupt",
        `${path} already exists and does not record ${draft.source}; this replica's folder was written by someone else. Run \`bimri share init\` to take a new replica ID.`,
      );
    }
  } else {
    // A close carries no entry: its key's line is not looked for.
    const live = draft.operation === "close" ? null : liveAt(store, draft.key, at);
    const vector = seenVector(s);
    if (seq > 1) vector[s.replica] = seq - 1;
    // Other clones refuse a record naming an event its vector does not cover
    // (governance.ts): one imported here past a gap is not named, so the
    // record reaches them as concurrent (a question for their owner) instead.
    const named = (event: string) =>
      parseEventId(event).replica === s.replica || vectorCovers(vector, event);
    const replaced = keys[draft.key]?.[0] ?? null;
    const record: ShareRecord = {
      ...draft,
      resolves: draft.resolves.filter(named),
      replica: s.replica,
      seq,
      entry: draft.operation === "close" ? null : sharedEntryOf(live?.entry ?? null),
      operation: draft.operation !== "close" && live === null ? "close" : draft.operation,
      replaces: replaced !== null && named(replaced) ? replaced : null,
      at: utcTimestamp(),
      vector: sortedVector(vector),
    };
    if (record.operation === "close") record.entry = null;
    // Seqs passed over right before this one (foreign files lay there): said
    // here, signed, so other clones stop waiting for records that never were.
    if (seq > s.nextSeq) record.passed = seq - s.nextSeq;
    // Issue 39: a record holding a credential is never published; one being
    // redacted goes out with its marker (engine/guard/publish_screen.ts).
    const published = publishableRecord(store.paths.root, path, record);
    const sha256 = recordHash(published);
    published.signature = signRecordHash(ctx, sha256);
    bytes = recordText(published, sha256);
    if (!createExclusive(path, bytes)) {
      throw new BimriError("io", `${path} appeared while exporting; retry.`);
    }
    faultPoint("share-after-record");
  }
  keepRecord(ctx, seq, bytes, path);
  if (s.keptThrough === seq - 1) {
    s.keptThrough = seq;
    s.folderMtime = folderMtime(folder);
  }
  s.nextSeq = seq + 1;
  keys[draft.key] = [event];
  return event;
}

/** A change of a batch: the proposal and the revision its commit made. */
type ChangeAt = { revision: number; id: string };

/**
 * The live generation of `key` as the change `at` left it (the head's when
 * none is given): the entry a record of that change carries. The key's line
 * in that revision's hot view, else the line the change itself cooled (its
 * own line went cold at once, in a full hot view: the archive row it wrote);
 * a key in neither (a revision no longer readable) is taken from the head.
 */
function liveAt(store: Store, key: string, at?: ChangeAt): LiveGeneration | null {
  if (at !== undefined && at.revision !== store.head.revision) {
    const text = readTextOrNull(store.paths.revision(at.revision));
    if (text !== null) {
      try {
        const hot = parseView(text, store.state.entry_max_chars).entries.find((e) =>
          e.entry.key === key
        );
        if (hot) return { entry: hot.entry, raw: hot.raw, storage: "hot", line: hot.line };
      } catch { /* unreadable: the head's */ }
    }
    for (const raw of linesCooledBy(store.paths, at.id)) {
      const entry = parseAnyEntry(raw);
      if (entry?.key === key) return { entry, raw, storage: "cold", line: -1 };
    }
  }
  return findLive(store.head.view, store.state, key);
}

/**
 * Exports the accepted change `proposalId` of a local run (not an import):
 * the head's own change, or with `at` one of a batch of earlier changes (the
 * batch moves the head seen once, after its last).
 */
function exportChange(
  store: Store,
  ctx: ShareContext,
  proposalId: string,
  at?: ChangeAt,
): void {
  const proposal = readProposal(store.paths, proposalId)?.proposal;
  if (!proposal || isImportActor(proposal.actor)) return;
  writeNextRecord(store, ctx, {
    kind: "change",
    key: proposal.key,
    operation: proposal.operation,
    resolves: [],
    run: proposal.run_id,
    actor: proposal.actor,
    source: proposalId,
  }, at);
  ctx.state.lastSource = proposalId;
  if (at === undefined) seeHead(ctx.state, store);
  saveShare(ctx);
}

/**
 * Called by the commit protocol after a run's proposal is accepted: exports
 * it when the store is shared (one lstat when it is not).
 */
export function afterAcceptedCommit(store: Store, proposalId: string, actor: string): void {
  if (isImportActor(actor) || !isShared(store.paths)) return;
  const ctx = loadShare(store.paths, true)!;
  if (ctx.state.lastSource === proposalId) return;
  faultPoint("share-before-export");
  exportChange(store, ctx, proposalId);
}

/** Marks resolution `conflictId` as due for export before it is applied. */
export function beforeResolution(paths: StorePaths, conflictId: string): ShareContext | null {
  if (!isShared(paths)) return null;
  const ctx = loadShare(paths, true)!;
  ctx.state.pendingResolution = conflictId;
  saveShare(ctx);
  return ctx;
}

/** Exports the owner's answer to `conflictId` once its resolution is `resolved`. */
export function exportResolution(store: Store, ctx: ShareContext, conflictId: string): void {
  const resolution = readRecordValue(store.paths.resolution(conflictId));
  if (resolution === null) {
    // No answer was written (a resolve refused, or killed before it answered): nothing to export.
    ctx.state.pendingResolution = null;
    saveShare(ctx);
    return;
  }
  if (resolution.status !== "resolved") return;
  const conflict = readRecordValue(store.paths.conflict(conflictId));
  const key = typeof conflict?.key === "string" ? conflict.key : null;
  if (key === null || conflict?.type !== "stale-base") {
    ctx.state.pendingResolution = null;
    saveShare(ctx);
    return;
  }
  const ids = Array.isArray(resolution.proposal_ids) ? resolution.proposal_ids : [];
  const resolves = ids.flatMap((id) =>
    typeof id === "string" && ctx.state.candidates[id] ? [ctx.state.candidates[id]] : []
  );
  const live = findLive(store.head.view, store.state, key);
  writeNextRecord(store, ctx, {
    kind: "resolution",
    key,
    operation: live === null ? "close" : "set",
    resolves: [...keysOf(ctx)[key] ?? [], ...resolves],
    run: null,
    actor: "user",
    source: conflictId,
  });
  for (const id of ids) if (typeof id === "string") delete ctx.state.candidates[id];
  ctx.state.pendingResolution = null;
  seeHead(ctx.state, store);
  saveShare(ctx);
}

function readRecordValue(path: string): Record<string, unknown> | null {
  const bytes = readBytesOrNull(path);
  if (bytes === null) return null;
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes));
    return typeof value === "object" && value !== null ? value as Record<string, unknown> : null;
  } catch {
    return null;
  }
}

/**
 * Exports the current memory as seed records, one per subject that has no
 * shared event yet (`share init`; after a crash part-way through, whichever
 * locked command runs next continues from the records already on disk, so
 * every subject is seeded exactly once). Returns how many were written.
 */
export function finishSeeding(store: Store, ctx: ShareContext): number {
  if (!ctx.state.seeding) return 0;
  const keys = keysOf(ctx);
  const subjects = [
    ...store.head.view.entries.map((e) => e.entry.key),
    ...Object.keys(store.state.cold_current),
  ].sort();
  let written = 0;
  for (const key of subjects) {
    if (keys[key] !== undefined) continue;
    writeNextRecord(store, ctx, {
      kind: "seed",
      key,
      operation: "set",
      resolves: [],
      run: null,
      actor: "share",
      source: "seed",
    });
    written++;
    faultPoint("share-after-seed");
  }
  ctx.state.seeding = false;
  saveShare(ctx);
  return written;
}

/**
 * Writes again this replica's own records that git removed from the working
 * tree (one directory listing when none is missing), with one notice.
 */
export function restoreOwn(ctx: ShareContext): void {
  const before = [ctx.state.keptThrough, ctx.state.folderMtime];
  const result = restoreOwnRecords(ctx);
  if (ctx.state.keptThrough !== before[0] || ctx.state.folderMtime !== before[1]) saveShare(ctx);
  const notice = restoreNotice(result, ctx.state.replica);
  if (notice !== null) noteShare(notice);
}

/**
 * Recovery, under the engine lock before a command changes memory: exports
 * the head's own commit when a crash came between it and its record, and a
 * resolution left pending. Costs one lstat on a store that is not shared.
 */
export function finishPendingExports(store: Store): ShareContext | null {
  if (!isShared(store.paths)) return null;
  // Before anything is written: a start that loaded no commit machinery stops
  // here when the head's last commit was left applying (it loads it and runs again).
  const finishCommit = commitFinisher();
  if (finishCommit === null && headCommitLeftApplying(store) !== null) {
    throw new CommitFinisherNeeded();
  }
  const ctx = loadShare(store.paths, true)!;
  const importing = importFinisher();
  // The everyday verbs load no pull machinery up front (share_wiring.ts): one
  // that finds a pull left unfinished stops here, before writing anything,
  // and runs again with it loaded.
  if (importing === null && pullLeftUnfinished(ctx)) throw new PullMachineryPending();
  restoreOwn(ctx);
  finishSeeding(store, ctx);
  // A pull killed while committing: finished before anything else moves memory.
  importing?.finishImport(store, ctx);
  finishCommit?.(store);
  if (replacedUnder(store, ctx)) return ctx;
  const reasonDue = headReasonDue(store, ctx);
  if (!(importing?.pullInProgress() ?? false)) exportOutsideChanges(store, ctx, reasonDue !== null);
  if (reasonDue !== null && reasonDue !== ctx.state.lastSource) exportChange(store, ctx, reasonDue);
  if (ctx.state.pendingResolution !== null) {
    exportResolution(store, ctx, ctx.state.pendingResolution);
  }
  return ctx;
}

/**
 * The proposal of the head's last revision when it accepted a change of a
 * local run that is not this replica's last exported source (a crash came
 * between the commit and its record), or null.
 */
function headReasonDue(store: Store, ctx: ShareContext): string | null {
  // A head seen has nothing left to export (a store replaced under this
  // clone is seen without exporting its revisions: replacedUnder).
  if (ctx.state.headSeen === store.head.revision) return null;
  const reason = /^accepted (R[0-9]{6}-Q[0-9]{3})$/.exec(store.state.last_revision_reason ?? "");
  if (reason === null || reason[1] === ctx.state.lastSource) return null;
  const decision = readDecision(store.paths, reason[1]);
  if (decision?.outcome !== "accepted" || typeof decision.resolution_id === "string") return null;
  const proposal = readProposal(store.paths, reason[1])?.proposal;
  return proposal && !isImportActor(proposal.actor) ? reason[1] : null;
}

/**
 * Exports the changes committed since the last head the share bookkeeping
 * saw, in revision order, each once: those the everyday commands left for
 * this export (start, sync and close do not export; pending_changes.ts lists
 * them), and any another engine committed (the reference engine commits
 * without writing records). On the everyday path this compares two numbers;
 * an export costs what it exports, and scans every decision only when the
 * list does not account for every revision since (a crash lost a line,
 * another engine or a migration committed).
 */
export function exportOutsideChanges(
  store: Store,
  ctx: ShareContext,
  headReasonDue = false,
): number {
  const s = ctx.state;
  const head = store.head.revision;
  if (s.headSeen === head) {
    clearPendingChanges(store.paths); // notes of changes exported already, if any
    return 0;
  }
  if (s.headSeen < 0 || s.pendingResolution !== null || s.importing.length > 0) {
    // The head counts as seen only once its own change is exported (by the
    // caller, next): a head seen is one with nothing left to export (idle.ts).
    if (headReasonDue) return 0;
    seeHead(s, store);
    saveShare(ctx);
    clearPendingChanges(store.paths);
    return 0;
  }
  const listed = listedChanges(store, s.headSeen, head);
  const due = listed ?? scannedChanges(store, s.headSeen, head);
  // Exported already by this export cut short (a crash): the listed ones up
  // to the last source, in their fixed order; the scanned ones by their records.
  const last = listed === null ? -1 : due.findIndex((c) => c.id === s.lastSource);
  const exported = listed === null
    ? exportedSources(ctx)
    : new Set(due.slice(0, last + 1).map((c) => c.id));
  let written = 0;
  for (const { id, revision } of due) {
    if (id === s.lastSource || exported.has(id)) continue;
    const proposal = readProposal(store.paths, id)?.proposal;
    if (!proposal || isImportActor(proposal.actor)) continue;
    faultPoint("share-before-export");
    exportChange(store, ctx, id, { revision, id });
    written++;
  }
  seeHead(s, store);
  saveShare(ctx);
  clearPendingChanges(store.paths);
  return written;
}

/** An accepted change of a local run, and the revision it made. */
type DueChange = { revision: number; id: string };

/**
 * The accepted changes in revisions `since`+1 through `head`, from the list
 * of pending changes, or null when the list does not account for every one
 * of those revisions (then they are scanned).
 */
function listedChanges(store: Store, since: number, head: number): DueChange[] | null {
  const ids = readPendingChanges(store.paths);
  if (ids === null) return null;
  const due: DueChange[] = [];
  const covered = new Set<number>();
  for (const id of ids) {
    const revision = acceptedRevision(store, id);
    if (revision === null || revision <= since || revision > head) continue;
    due.push({ revision, id });
    covered.add(revision);
  }
  for (let revision = since + 1; revision <= head; revision++) {
    if (!covered.has(revision)) return null;
  }
  return due.sort((a, b) => a.revision - b.revision);
}

/** Every accepted change of the store in revisions `since`+1 through `head`, read from its decisions. */
function scannedChanges(store: Store, since: number, head: number): DueChange[] {
  const due: DueChange[] = [];
  for (const name of listNames(join(store.paths.dir, "decisions"))) {
    const id = name.replace(/\.json$/, "");
    if (!PROPOSAL_ID.test(id)) continue;
    const revision = acceptedRevision(store, id);
    if (revision === null || revision <= since || revision > head) continue;
    due.push({ revision, id });
  }
  return due.sort((a, b) => a.revision - b.revision);
}

/** The revision that proposal `id` made when it was accepted as a change (not an answer), or null. */
function acceptedRevision(store: Store, id: string): number | null {
  let decision;
  try {
    decision = readDecision(store.paths, id);
  } catch {
    return null; // damaged authority: doctor reports it
  }
  if (decision?.outcome !== "accepted" || typeof decision.resolution_id === "string") return null;
  return typeof decision.revision === "number" ? decision.revision : null;
}

/**
 * True (after saying so, and noting the head as seen) when the head moved
 * without this clone exporting and its history no longer holds the revision
 * team memory last saw: the store was replaced under this clone (a git
 * checkout of a branch that tracks .bimri/ overwrites it). Its commits are
 * not this clone's to sign, neither as another engine's changes nor as a
 * commit left unexported by a crash; they stay local.
 */
function replacedUnder(store: Store, ctx: ShareContext): boolean {
  const s = ctx.state;
  const head = store.head.revision;
  if (s.headSeen === head || s.headSeen < 0 || historyHolds(store, s.headSeen, s.headSeenHash)) {
    return false;
  }
  noteShare(
    `BIMRI ERROR: .bimri/ no longer holds the revision V${
      String(s.headSeen).padStart(6, "0")
    } that team memory last saw: the store was replaced under this clone (a git checkout of a branch that tracks .bimri/ or bimri.md does that), so its revisions up to V${
      String(head).padStart(6, "0")
    } were not exported as this clone's. If git tracks them, run \`git rm -r --cached --ignore-unmatch .bimri bimri.md\` and commit; to start over from the team's records, delete .bimri/ and bimri.md and run \`bimri share pull\`.`,
  );
  seeHead(s, store);
  saveShare(ctx);
  return true;
}

/**
 * True when revision `seen` of the store still has the hash team memory
 * recorded for it (or none was recorded: an earlier bimri's bookkeeping).
 * Read only when the head moved without this clone exporting (rare).
 */
function historyHolds(store: Store, seen: number, hash: string | null): boolean {
  if (hash === null) return true;
  const bytes = readBytesOrNull(store.paths.revision(seen));
  return bytes !== null && sha256Hex(bytes) === hash;
}

/** The sources (proposal IDs) of this replica's records, from their kept bytes. */
function exportedSources(ctx: ShareContext): Set<string> {
  const out = new Set<string>();
  for (let seq = 1; seq < ctx.state.nextSeq; seq++) {
    let bytes = readBytesOrNull(join(keptFolder(ctx), recordName(seq)));
    if (bytes === null && !wasPassed(ctx, seq)) {
      // The working tree is read bounded, without following links (own.ts).
      const slot = exportedOwnSlot(ctx, seq);
      if (slot.kind === "own") bytes = slot.bytes;
    }
    if (bytes === null) continue;
    try {
      out.add(parseRecordBytes(bytes, ctx.state.replica, seq).source);
    } catch { /* not this replica's record: ignored */ }
  }
  return out;
}
