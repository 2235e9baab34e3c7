/**
 * The local, host-bound share state kept beside the store in `.bimri/`
 * (files the reference ignores): `replica.local.json` (this folder's replica
 * ID and the absolute store path it was minted for) and `share.local.json`
 * (next seq, what was imported, which shared event produced each key's
 * current generation, and the export cursor). Both are written with the
 * atomic-replace helper under the engine lock.
 */
import { utcTimestamp } from "../model/time.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import { atomicReplace } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import { EVENT_ID, eventId, mintReplicaId } from "./ids.ts";
import { ownRecordAfterForeign } from "./own.ts";
import { notePassed } from "./keep.ts";
import { requireRealFolder } from "./safe_read.ts";
import { samePlace } from "./place.ts";
import type { ShareContext, ShareState } from "./context.ts";
import {
  emptyCounts,
  readShareJson,
  readShareState,
  replicaFile,
  SHARE_FOLDER,
  shareDir,
  shareKeysFile,
  shareStateFile,
} from "./state_file.ts";

// The readers live in state_file.ts (an everyday command reads them alone); most share modules import them here.
export {
  isShared,
  replicaFile,
  seenVector,
  SHARE_FOLDER,
  shareDir,
  shareKeysFile,
  shareStateFile,
} from "./state_file.ts";

/**
 * Loads the share context of a replica, or null when the store is not
 * shared. A folder copied or moved (its path differs from the recorded one)
 * gets a fresh replica ID when `forWrite`, so two folders never write as one
 * replica; what the old ID exported counts as seen.
 */
export function loadShare(paths: StorePaths, forWrite: boolean): ShareContext | null {
  const state = readShareState(paths)?.state;
  if (state === undefined) return null;
  const ctx: ShareContext = { paths, shareDir: shareDir(paths), state };
  requireRealFolder(ctx.shareDir, SHARE_FOLDER);
  rollForward(ctx);
  if (forWrite && !samePlace(state.storePath, paths.root)) remint(ctx);
  return ctx;
}

/**
 * Brings the export cursor up to this replica's own records on disk. A
 * record is created (exclusively, durably) before the cursor names it, so
 * after a crash between the two (an export, or `share init` seeding) the
 * records past `nextSeq` are replayed here: each makes its event the key's
 * current one and a change names the last source exported. A resolution
 * whose bookkeeping is still pending stops the replay: its own recovery
 * (`exportResolution`) adopts the record. On the everyday path this costs
 * one failed open.
 */
function rollForward(ctx: ShareContext): void {
  const s = ctx.state;
  for (;;) {
    // Files this clone did not write are passed over (own.ts) when one of its
    // own records lies beyond them.
    const found = ownRecordAfterForeign(ctx, s.nextSeq);
    if (found === null) return;
    const { record, seq } = found;
    if (record.kind === "resolution" && record.source === s.pendingResolution) return;
    for (let at = s.nextSeq; at < seq; at++) notePassed(ctx, at);
    // The key map is read only by a command that needs it (most do not).
    const event = eventId(s.replica, seq);
    if (s.keys !== null) s.keys[record.key] = [event];
    else s.replayed.push([record.key, event]);
    if (record.kind === "change") s.lastSource = record.source;
    s.nextSeq = seq + 1;
  }
}

/** The key -> shared events map, read on first use. */
export function keysOf(ctx: ShareContext): Record<string, string[]> {
  if (ctx.state.keys !== null) return ctx.state.keys;
  const raw = readShareJson(shareKeysFile(ctx.paths), ".bimri/share-keys.local.json") ?? {};
  const keys: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (Array.isArray(v)) {
      keys[k] = v.filter((e): e is string => typeof e === "string" && EVENT_ID.test(e));
    }
  }
  for (const [key, event] of ctx.state.replayed) keys[key] = [event];
  ctx.state.replayed = [];
  ctx.state.keys = keys;
  return keys;
}

/** Gives a copied or moved store its own replica ID. */
function remint(ctx: ShareContext): void {
  const s = ctx.state;
  if (s.nextSeq > 1) s.vector[s.replica] = Math.max(s.vector[s.replica] ?? 0, s.nextSeq - 1);
  if (!s.retired.includes(s.replica)) s.retired.push(s.replica);
  s.replica = mintReplicaId();
  s.nextSeq = 1;
  s.keptThrough = 0;
  s.storePath = ctx.paths.root;
  saveShare(ctx);
  writeReplicaFile(ctx.paths, s.replica);
}

/** Writes `.bimri/replica.local.json` for `replica` at this store's path. */
export function writeReplicaFile(paths: StorePaths, replica: string): void {
  atomicReplace(
    replicaFile(paths),
    canonicalJson({ created_at: utcTimestamp(), replica, store_path: paths.root }),
  );
}

/** A fresh share state for `replica`. */
export function freshShareState(replica: string, storePath: string): ShareState {
  return {
    replica,
    storePath,
    nextSeq: 1,
    vector: {},
    keys: {},
    replayed: [],
    lastSource: null,
    pendingResolution: null,
    importing: [],
    candidates: {},
    retired: [],
    counts: emptyCounts(),
    seeding: false,
    keptThrough: 0,
    ahead: {},
    headSeen: -1,
    headSeenHash: null,
    pulling: false,
    folderMtime: null,
    quiet: {},
  };
}

/** The key map text this process last wrote, per file. */
const keysWritten = new Map<string, string>();

/** Atomically saves `share.local.json` (and the key map when it was read). */
export function saveShare(ctx: ShareContext): void {
  const s = ctx.state;
  // Replayed events must reach the key file before the cursor moves past them.
  if (s.replayed.length > 0) keysOf(ctx);
  if (s.keys !== null) {
    // Unchanged since this process last wrote it: not rewritten (a pull saves often).
    const text = canonicalJson(s.keys);
    const path = shareKeysFile(ctx.paths);
    if (keysWritten.get(path) !== text) {
      atomicReplace(path, text);
      keysWritten.set(path, text);
    }
  }
  atomicReplace(
    shareStateFile(ctx.paths),
    canonicalJson({
      candidates: s.candidates,
      counts: s.counts,
      folder_mtime: s.folderMtime,
      head_seen: s.headSeen,
      head_seen_hash: s.headSeenHash,
      ahead: s.ahead,
      importing: s.importing,
      kept_through: s.keptThrough,
      last_source: s.lastSource,
      pulling: s.pulling,
      next_seq: s.nextSeq,
      pending_resolution: s.pendingResolution,
      quiet_folders: s.quiet,
      replica: s.replica,
      retired: s.retired,
      seeding: s.seeding,
      vector: s.vector,
    }),
  );
}

/** Notes the store's current head as the one team memory's bookkeeping matches (revision and hash). */
export function seeHead(
  state: Pick<ShareState, "headSeen" | "headSeenHash">,
  store: { head: { revision: number }; state: { head_hash: string | null } },
): void {
  state.headSeen = store.head.revision;
  state.headSeenHash = store.state.head_hash;
}
