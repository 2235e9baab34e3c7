/**
 * Reading the local share bookkeeping of `.bimri/` (`replica.local.json` and
 * `share.local.json`) into a share state, without the recovery that
 * state.ts's loadShare runs on it: what an everyday command reads to see that
 * nothing is pending (idle.ts) without loading export, signing or the pull.
 */
import { join } from "../store/os_path.ts";
import { BimriError } from "../errors.ts";
import { isJsonObject, type JsonValue } from "../model/json.ts";
import { lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { decodeUtf8Strict } from "../model/text.ts";
import type { StorePaths } from "../store/paths.ts";
import { EVENT_ID, REPLICA_ID } from "./ids.ts";
import type { Vector } from "./vector.ts";
import type { ImportCounts, ShareState } from "./context.ts";

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

/** A JSON object file of `.bimri/` (null when absent); throws, naming `label`, when unreadable. */
export function readShareJson(path: string, label: string): Record<string, JsonValue> | null {
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

/** Import counts of a state that has imported nothing yet. */
export function emptyCounts(): ImportCounts {
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
 * The share state as `.bimri/` records it, or null when the store is not
 * shared; throws when a file is unreadable. A replica file re-minted after a
 * crash between the two files starts the state over under the new ID
 * (`restarted`: the state read differs from the file until it is saved).
 */
export function readShareState(
  paths: StorePaths,
): { state: ShareState; restarted: boolean } | null {
  const replicaRaw = readShareJson(replicaFile(paths), ".bimri/replica.local.json");
  if (replicaRaw === null) return null;
  const replica = replicaRaw.replica;
  if (typeof replica !== "string" || !REPLICA_ID.test(replica)) {
    throw new BimriError(
      "store-corrupt",
      ".bimri/replica.local.json names no valid replica ID; remove it and run `bimri share init`.",
    );
  }
  const raw = readShareJson(shareStateFile(paths), ".bimri/share.local.json") ?? {};
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
    headSeenHash:
      typeof raw.head_seen_hash === "string" && /^[0-9a-f]{64}$/.test(raw.head_seen_hash)
        ? raw.head_seen_hash
        : null,
    pulling: raw.pulling === true,
    folderMtime: typeof raw.folder_mtime === "number" ? raw.folder_mtime : null,
    quiet: numberMap(raw.quiet_folders),
  };
  const restarted = state.replica !== replica;
  if (restarted) {
    // replica.local.json was re-minted after a crash between the two files.
    state.retired.push(state.replica);
    state.replica = replica;
    state.nextSeq = 1;
    state.keptThrough = 0;
  }
  return { state, restarted };
}

/** The vector of everything this replica has exported or imported. */
export function seenVector(state: ShareState): Vector {
  const out: Vector = { ...state.vector };
  if (state.nextSeq > 1) out[state.replica] = state.nextSeq - 1;
  else delete out[state.replica];
  return out;
}
