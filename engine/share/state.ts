/**
 * The local, host-bound share state kept beside the store in `.bimri/`
 * (files the reference ignores): `replica.local.json` (this folder's replica
 * ID and the absolute store path it was minted for) and `share.local.json`
 * (next seq, what was imported, which shared event produced each key's
 * current generation, and the export cursor). Both are written with the
 * atomic-replace helper under the engine lock.
 */
import { join } from "../store/os_path.ts";
import { BimriError } from "../errors.ts";
import { utcTimestamp } from "../model/time.ts";
import { isJsonObject, type JsonValue } from "../model/json.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import { atomicReplace, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { decodeUtf8Strict } from "../model/text.ts";
import type { StorePaths } from "../store/paths.ts";
import { EVENT_ID, eventId, mintReplicaId, REPLICA_ID } from "./ids.ts";
import { ownRecordAfterForeign } from "./own.ts";
import { notePassed } from "./keep.ts";
import { requireRealFolder } from "./safe_read.ts";
import type { Vector } from "./vector.ts";
import { samePlace } from "./place.ts";
import type { ImportCounts, ShareContext, ShareState } from "./context.ts";

/** The committed folder that carries every replica's records. */
export const SHARE_FOLDER = ".bimri-share";

/** `.bimri/replica.local.json`. */
export function replicaFile(paths: StorePaths): string {
  return join(paths.dir, "replica.local.json");
}

/** `.bimri/share.local.json`. */
export function shareStateFile(paths: StorePaths): string {
  return join(paths.dir, "share.local.json");
}

/** `.bimri/share-keys.local.json`. */
export function shareKeysFile(paths: StorePaths): string {
  return join(paths.dir, "share-keys.local.json");
}

/** `<root>/.bimri-share`. */
export function shareDir(paths: StorePaths): string {
  return join(paths.root, SHARE_FOLDER);
}

/** True when this store is a replica (one lstat: the everyday cost of sharing). */
export function isShared(paths: StorePaths): boolean {
  return lstatOrNull(replicaFile(paths)) !== null;
}

function readJson(path: string, label: string): Record<string, JsonValue> | null {
  const bytes = readBytesOrNull(path);
  if (bytes === null) return null;
  const text = decodeUtf8Strict(bytes);
  try {
    const value = JSON.parse(text ?? "") as JsonValue;
    if (isJsonObject(value)) return value;
  } catch { /* reported below */ }
  throw new BimriError(
    "store-corrupt",
    `${label} is unreadable; remove it and run \`bimri share init\` again (records already exported stay in ${SHARE_FOLDER}/).`,
  );
}

function emptyCounts(): ImportCounts {
  return { applied: 0, noop: 0, superseded: 0, conflicts: 0, held: 0, resolved: 0 };
}

function numberMap(value: JsonValue | undefined): Vector {
  const out: Vector = {};
  if (!isJsonObject(value)) return out;
  for (const [k, v] of Object.entries(value)) {
    if (REPLICA_ID.test(k) && typeof v === "number" && Number.isInteger(v) && v >= 0) out[k] = v;
  }
  return out;
}

function aheadMap(value: JsonValue | undefined): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  if (!isJsonObject(value)) return out;
  for (const [k, v] of Object.entries(value)) {
    if (!REPLICA_ID.test(k) || !Array.isArray(v)) continue;
    const seqs = v.filter((n): n is number =>
      typeof n === "number" && Number.isInteger(n) && n > 0
    );
    if (seqs.length > 0) out[k] = seqs.sort((a, b) => a - b);
  }
  return out;
}

/**
 * Loads the share context of a replica, or null when the store is not
 * shared. A folder copied or moved (its path differs from the recorded one)
 * gets a fresh replica ID when `forWrite`, so two folders never write as one
 * replica; what the old ID exported counts as seen.
 */
export function loadShare(paths: StorePaths, forWrite: boolean): ShareContext | null {
  const replicaRaw = readJson(replicaFile(paths), ".bimri/replica.local.json");
  if (replicaRaw === null) return null;
  const replica = replicaRaw.replica;
  if (typeof replica !== "string" || !REPLICA_ID.test(replica)) {
    throw new BimriError(
      "store-corrupt",
      ".bimri/replica.local.json names no valid replica ID; remove it and run `bimri share init`.",
    );
  }
  const raw = readJson(shareStateFile(paths), ".bimri/share.local.json") ?? {};
  const candidates: Record<string, string> = {};
  if (isJsonObject(raw.candidates)) {
    for (const [k, v] of Object.entries(raw.candidates)) {
      if (typeof v === "string") candidates[k] = v;
    }
  }
  const counts = emptyCounts();
  if (isJsonObject(raw.counts)) {
    for (const k of Object.keys(counts) as (keyof ImportCounts)[]) {
      const v = raw.counts[k];
      if (typeof v === "number") counts[k] = v;
    }
  }
  const state: ShareState = {
    replica: typeof raw.replica === "string" ? raw.replica : replica,
    storePath: typeof replicaRaw.store_path === "string" ? replicaRaw.store_path : "",
    nextSeq: typeof raw.next_seq === "number" ? raw.next_seq : 1,
    vector: numberMap(raw.vector),
    keys: null,
    replayed: [],
    lastSource: typeof raw.last_source === "string" ? raw.last_source : null,
    pendingResolution: typeof raw.pending_resolution === "string" ? raw.pending_resolution : null,
    importing: Array.isArray(raw.importing)
      ? raw.importing.filter((e): e is string => typeof e === "string" && EVENT_ID.test(e))
      : [],
    candidates,
    retired: Array.isArray(raw.retired)
      ? raw.retired.filter((r): r is string => typeof r === "string" && REPLICA_ID.test(r))
      : [],
    counts,
    seeding: raw.seeding === true,
    keptThrough: typeof raw.kept_through === "number" ? raw.kept_through : 0,
    ahead: aheadMap(raw.ahead),
    headSeen: typeof raw.head_seen === "number" ? raw.head_seen : -1,
    pulling: raw.pulling === true,
    folderMtime: typeof raw.folder_mtime === "number" ? raw.folder_mtime : null,
  };
  if (state.replica !== replica) {
    // replica.local.json was re-minted after a crash between the two files.
    state.retired.push(state.replica);
    state.replica = replica;
    state.nextSeq = 1;
    state.keptThrough = 0;
  }
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
  const raw = readJson(shareKeysFile(ctx.paths), ".bimri/share-keys.local.json") ?? {};
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
    pulling: false,
    folderMtime: null,
  };
}

/** The vector of everything this replica has exported or imported. */
export function seenVector(state: ShareState): Vector {
  const out: Vector = { ...state.vector };
  if (state.nextSeq > 1) out[state.replica] = state.nextSeq - 1;
  else delete out[state.replica];
  return out;
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
      ahead: s.ahead,
      importing: s.importing,
      kept_through: s.keptThrough,
      last_source: s.lastSource,
      pulling: s.pulling,
      next_seq: s.nextSeq,
      pending_resolution: s.pendingResolution,
      replica: s.replica,
      retired: s.retired,
      seeding: s.seeding,
      vector: s.vector,
    }),
  );
}
