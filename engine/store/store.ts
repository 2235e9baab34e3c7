/**
 * Opening a store: layout creation on first use, strict state loading, the
 * verified accepted head, and saving state. Every mutation runs under the
 * engine lock through `withStore`.
 */
import { BimriError } from "../errors.ts";
import { GENESIS_VIEW, type ParsedView, parseView } from "../model/hot.ts";
import { genesisState, parseState, type State, stateToJson } from "../model/state.ts";
import { decodeUtf8Strict, sha256Hex } from "../model/text.ts";
import { canonicalJson, type JsonValue } from "./canonical_json.ts";
import {
  atomicReplace,
  createExclusive,
  lstatOrNull,
  readBytesOrNull,
  refuseSymlink,
} from "./files.ts";
import { ensureLockFile, withEngineLock } from "./lock.ts";
import { STORE_FOLDERS, StorePaths } from "./paths.ts";

/** The accepted head: revision number, exact text, hash and parsed view. */
export type Head = {
  revision: number;
  text: string;
  hash: string;
  view: ParsedView;
};

/** A loaded store: paths, validated state and verified head. */
export type Store = {
  paths: StorePaths;
  state: State;
  head: Head;
};

/** True when `root` already holds a `.bimri/state.json`. */
export function storeExists(paths: StorePaths): boolean {
  return lstatOrNull(paths.state) !== null;
}

function refuseUnsafeLayout(paths: StorePaths): void {
  refuseSymlink(paths.dir, ".bimri");
  refuseSymlink(paths.view, "bimri.md");
  refuseSymlink(paths.state, ".bimri/state.json");
  refuseSymlink(paths.index, ".bimri/index.tsv");
  for (const folder of STORE_FOLDERS) refuseSymlink(paths.folder(folder), `.bimri/${folder}`);
}

/** Creates `.bimri/`, its folders and the lock file if missing (idempotent, no authority writes). */
export function ensureLayout(paths: StorePaths): void {
  refuseUnsafeLayout(paths);
  Deno.mkdirSync(paths.dir, { recursive: true });
  for (const folder of STORE_FOLDERS) Deno.mkdirSync(paths.folder(folder), { recursive: true });
  ensureLockFile(paths);
}

/**
 * Writes the genesis revision, view and state when the store has no state yet.
 * Must run under the engine lock. An existing v5-shaped bimri.md becomes V000000.
 */
export function initializeIfNeeded(paths: StorePaths): void {
  if (storeExists(paths)) return;
  let genesis = GENESIS_VIEW;
  const existing = readBytesOrNull(paths.view);
  if (existing !== null) {
    const text = decodeUtf8Strict(existing);
    const parsed = text === null ? null : parseView(text);
    if (text === null || parsed === null || parsed.errors.length > 0) {
      throw new BimriError(
        "store-unsafe",
        "bimri.md exists but is not a BIMRI v5 view and there is no .bimri/state.json. Run install --target <project> to migrate older memory; nothing was changed.",
      );
    }
    genesis = text;
  }
  const revisionPath = paths.revision(0);
  if (lstatOrNull(revisionPath) === null) createExclusive(revisionPath, genesis);
  const revisionBytes = Deno.readFileSync(revisionPath);
  const hash = sha256Hex(revisionBytes);
  if (existing === null) atomicReplace(paths.view, revisionBytes);
  saveState(paths, genesisState(hash));
}

/** Reads and strictly validates state.json (never resets it). */
export function loadState(paths: StorePaths): State {
  refuseSymlink(paths.state, ".bimri/state.json");
  const bytes = readBytesOrNull(paths.state);
  if (bytes === null) {
    throw new BimriError(
      "store-corrupt",
      "state.json is missing; restore it from a backup, then run doctor.",
    );
  }
  const text = decodeUtf8Strict(bytes);
  let raw: JsonValue;
  try {
    if (text === null) throw new Error("not UTF-8");
    raw = JSON.parse(text) as JsonValue;
  } catch {
    throw new BimriError(
      "store-corrupt",
      "state.json is not valid JSON; BIMRI will not reset it. Restore .bimri/state.json from a backup, then run doctor.",
    );
  }
  return parseState(raw);
}

/** Atomically replaces state.json with `state` in canonical JSON. */
export function saveState(paths: StorePaths, state: State): void {
  atomicReplace(paths.state, canonicalJson(stateToJson(state)));
}

/** Reads revision `n`'s exact text, or null if the file is missing. */
export function readRevision(paths: StorePaths, n: number): string | null {
  const bytes = readBytesOrNull(paths.revision(n));
  return bytes === null ? null : decodeUtf8Strict(bytes);
}

/** Loads and verifies the accepted head named by `state`. */
export function loadHead(paths: StorePaths, state: State): Head {
  const path = paths.revision(state.head_revision);
  refuseSymlink(path, `.bimri/revisions/V${String(state.head_revision).padStart(6, "0")}.md`);
  const bytes = readBytesOrNull(path);
  if (bytes === null) {
    throw new BimriError(
      "store-corrupt",
      `the accepted head revision V${
        String(state.head_revision).padStart(6, "0")
      } is missing; run doctor.`,
    );
  }
  const hash = sha256Hex(bytes);
  if (hash !== state.head_hash) {
    throw new BimriError(
      "store-corrupt",
      "the accepted head revision does not match state.head_hash; run doctor.",
    );
  }
  const text = decodeUtf8Strict(bytes);
  if (text === null) {
    throw new BimriError(
      "store-corrupt",
      "the accepted head revision is not valid UTF-8; run doctor.",
    );
  }
  const view = parseView(text, state.entry_max_chars);
  return { revision: state.head_revision, text, hash, view };
}

/** Opens an existing store for reading without creating or changing anything. */
export function openExisting(paths: StorePaths): Store {
  refuseUnsafeLayout(paths);
  const state = loadState(paths);
  return { paths, state, head: loadHead(paths, state) };
}

/**
 * Runs `action` under the engine lock on a store that is created on first use.
 * The action receives the freshly loaded store.
 */
export function withStore<T>(root: string, action: (store: Store) => T): T {
  const paths = new StorePaths(root);
  ensureLayout(paths);
  return withEngineLock(paths, () => {
    initializeIfNeeded(paths);
    const state = loadState(paths);
    const head = loadHead(paths, state);
    return action({ paths, state, head });
  });
}

/** Deletes the reference's audit checkpoint after authority writes so it re-proves the store. */
export function invalidateAuditWitness(paths: StorePaths): void {
  try {
    Deno.removeSync(paths.auditWitness);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/** The revision number the next commit will take (head + 1, skipping orphan files). */
export function plannedRevisionNumber(store: Store): number {
  let n = store.state.head_revision + 1;
  while (n <= 999999 && lstatOrNull(store.paths.revision(n)) !== null) n++;
  if (n > 999999) throw new BimriError("refused", "the store has used every revision number.");
  return n;
}
