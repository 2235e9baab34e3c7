/**
 * Opening a store: layout creation on first use, strict state loading, the
 * verified accepted head, and saving state. Every mutation runs under the
 * engine lock through `withStore`.
 */
import { BimriError } from "../errors.ts";
import type {
  existingV5View,
  Head,
  loadHead,
  refuseOlderMemory,
  refuseResetOverHistory,
} from "./head_load.ts";
import {
  type ColdRecord,
  genesisState,
  parseState,
  type State,
  stateToJson,
} from "../model/state.ts";
import { decodeUtf8Strict, utf8 } from "../model/plain_text.ts";
import { canonicalJson } from "./canonical_json.ts";
import type { JsonValue } from "../model/json.ts";
import {
  atomicReplace,
  createExclusive,
  lstatOrNull,
  readBytesAndInfoOrNull,
  readBytesOrNull,
  refuseSymlink,
} from "./files.ts";
import {
  coldTextFor,
  isOwnStateWrite,
  markOwnStateWrite,
  recordNotedHead,
  rememberColdText,
} from "./head_cache.ts";
import { ensureLockFile, withEngineLock } from "./lock.ts";
import { STORE_FOLDERS, StorePaths } from "./paths.ts";
import {
  LEGACY_MIGRATION,
  LegacyRetirementPending,
  legacyRootFiles,
  pendingRetirementError,
  unclaimedLegacyRootsError,
} from "./legacy_root.ts";

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
  refuseSymlink(paths.view, "bimri.md");
  refuseSymlink(paths.state, ".bimri/state.json");
  refuseSymlink(paths.index, ".bimri/index.tsv");
  ensureFolder(paths.dir, ".bimri");
  for (const folder of STORE_FOLDERS) ensureFolder(paths.folder(folder), `.bimri/${folder}`);
  ensureLockFile(paths);
}

/** One lstat per folder on the everyday path: create it when missing, refuse a link or a file. */
function ensureFolder(path: string, label: string): void {
  const info = lstatOrNull(path);
  if (info?.isDirectory) return;
  if (info === null) {
    Deno.mkdirSync(path, { recursive: true });
    return;
  }
  refuseSymlink(path, label);
  throw new BimriError(
    "store-unsafe",
    `${label} is not a folder; move that file away so BIMRI can recreate the folder.`,
  );
}

/**
 * Writes the genesis revision, view and state when the store has no state yet.
 * Must run under the engine lock. An existing v5-shaped bimri.md becomes V000000.
 */
export function initializeIfNeeded(paths: StorePaths): void {
  if (storeExists(paths)) return;
  const { GENESIS_VIEW } = headViews(); // before anything is written (see LoadPending)
  // Checked again under the lock: the file may have appeared since the pre-check.
  const existing = headViews().existingV5View(paths);
  const genesis = existing ?? GENESIS_VIEW;
  const revisionPath = paths.revision(0);
  headViews().refuseResetOverHistory(paths, genesis);
  if (lstatOrNull(revisionPath) === null) createExclusive(revisionPath, genesis);
  const revisionBytes = Deno.readFileSync(revisionPath);
  const hash = headViews().sha256Hex(revisionBytes);
  if (existing === null) atomicReplace(paths.view, revisionBytes);
  saveState(paths, genesisState(hash));
}

/**
 * Reads and strictly validates state.json (never resets it). A state.json
 * still marked as bimri's own write skips re-validating its entries unless
 * `audit` asks for every check (the state mark, store/head_cache.ts).
 */
export function loadState(paths: StorePaths, options: { audit?: boolean } = {}): State {
  refuseSymlink(paths.state, ".bimri/state.json");
  const read = readBytesAndInfoOrNull(paths.state);
  if (read === null) {
    throw new BimriError(
      "store-corrupt",
      "state.json is missing; restore it from a backup, then run doctor.",
    );
  }
  const { bytes, info } = read;
  const text = decodeUtf8Strict(bytes);
  let raw: JsonValue;
  try {
    if (text === null) throw new Error("not UTF-8");
    raw = JSON.parse(text) as JsonValue;
  } catch {
    throw new BimriError(
      "store-corrupt",
      "state.json is unreadable (not valid JSON); BIMRI stopped without resetting it. Restore .bimri/state.json from a backup, then run doctor.",
    );
  }
  const ownWrite = !options.audit && text !== null && bytes.length === info.size &&
    isOwnStateWrite(paths, info);
  const state = parseState(raw, ownWrite);
  if (ownWrite) rememberColdText(paths, text, bytes, state.cold_current);
  else foreignStates.add(state);
  return state;
}

/** States read from a state.json bimri did not write last (see withStore). */
const foreignStates = new WeakSet<State>();

/**
 * Before a writer works on a state.json someone else wrote (an editor, the
 * reference engine, a restore or a copy), its cold-current records must agree
 * with the rest of the store, as the reference checks when it loads: no
 * subject is current both hot and cold, and each cold record is bound to
 * exactly one cooled archive row. bimri's own writes keep both true, so the
 * everyday path skips this.
 */
function requireColdAgreement(store: Store): void {
  const cold = store.state.cold_current;
  if (Object.keys(cold).length === 0) return;
  for (const { entry } of store.head.view.entries) {
    if (Object.hasOwn(cold, entry.key)) {
      throw new BimriError(
        "store-corrupt",
        `subject ${entry.key} is current both hot and cold-current; nothing was changed. Run doctor.`,
      );
    }
  }
  if (coldBindings === null) throw new LoadPending("the cold-record check", loadColdAgreement);
  coldBindings(store.paths, cold);
}

/** archive_month.ts `verifyColdBindings` once `loadColdAgreement` loaded it. */
let coldBindings: ((paths: StorePaths, cold: Record<string, ColdRecord>) => void) | null = null;
/** archive_month.ts `verifyColdBinding` (one subject's record) once `loadColdAgreement` loaded it. */
let coldBinding: ((paths: StorePaths, key: string, cold: ColdRecord) => void) | null = null;

/**
 * Loads what `withStore` needs to check the cold records of a state.json
 * someone else wrote against the archive (archive_month.ts). commands/run.ts
 * loads it before a verb runs, except for start, journal, propose and get:
 * for those it loads only when a `LoadPending` says that such a state is
 * there (or, for get, that the subject is cold), and then runs the verb once more.
 */
export async function loadColdAgreement(): Promise<void> {
  if (coldBindings !== null) return;
  const month = await import("./archive_month.ts");
  coldBinding = month.verifyColdBinding;
  coldBindings = month.verifyColdBindings;
}

/**
 * archive_month.ts `verifyColdBinding`, which proves one cold-current record
 * against its archive month (`get --key` of a cold subject); a `LoadPending`
 * until `loadColdAgreement` loaded it.
 */
export function coldBindingCheck(): (paths: StorePaths, key: string, cold: ColdRecord) => void {
  if (coldBinding === null) throw new LoadPending("the cold-record check", loadColdAgreement);
  return coldBinding;
}

/**
 * What the store needs to read a head or create a store: the genesis view
 * (hot.ts), the hashing of revisions (text.ts), the head's verified read and
 * the checks before a genesis (head_load.ts).
 */
type HeadViews = {
  GENESIS_VIEW: string;
  sha256Hex: (data: Uint8Array) => string;
  loadHead: typeof loadHead;
  refuseOlderMemory: typeof refuseOlderMemory;
  existingV5View: typeof existingV5View;
  refuseResetOverHistory: typeof refuseResetOverHistory;
};

/** hot.ts's parsing, text.ts's hashing and head_load.ts once `loadHeadViews` loaded them. */
let views: HeadViews | null = null;

/**
 * Loads the head's verified read (head_load.ts) and with it the view parsing
 * (hot.ts) and the hashing of revisions (text.ts). commands/run.ts loads them before every
 * verb but journal, which never reads the head: a journal that must (a new
 * store, a state.json someone else wrote) stops with a `LoadPending` before
 * writing anything and runs again.
 */
export async function loadHeadViews(): Promise<void> {
  if (views !== null) return;
  const { loadHead, refuseOlderMemory, existingV5View, refuseResetOverHistory } = await import(
    "./head_load.ts"
  );
  const { GENESIS_VIEW } = await import("../model/hot.ts");
  const { sha256Hex } = await import("../model/text.ts");
  views = {
    GENESIS_VIEW,
    sha256Hex,
    loadHead,
    refuseOlderMemory,
    existingV5View,
    refuseResetOverHistory,
  };
}

function headViews(): HeadViews {
  if (views === null) throw new LoadPending("the view parsing (hot.ts)", loadHeadViews);
  return views;
}

/** What view_sync.ts `syncView` returns (notices and warnings for stderr). */
type ViewRepairResult = { notices: string[]; warnings: string[] };

/** view_sync.ts `syncView`, registered as view_sync.ts loads (see view_on_demand.ts). */
let viewRepair: ((store: Store) => ViewRepairResult) | null = null;

/** Called by view_sync.ts as it loads: its `syncView`, for view_on_demand.ts. */
export function registerViewRepair(syncView: (store: Store) => ViewRepairResult): void {
  viewRepair = syncView;
}

/** view_sync.ts `syncView` when view_sync.ts is loaded, else null (view_on_demand.ts). */
export function loadedViewRepair(): ((store: Store) => ViewRepairResult) | null {
  return viewRepair;
}

/**
 * Thrown, before the verb wrote anything, when its store needs a module that
 * start, journal and propose load on demand: the check of a foreign
 * state.json's cold records (`withStore`, before its action runs) or the
 * repair of a bimri.md that differs from the head (view_on_demand.ts).
 * commands/run.ts then calls `load` and runs the verb once more.
 */
export class LoadPending extends Error {
  /** Loads what was missing. */
  readonly load: () => Promise<void>;
  constructor(what: string, load: () => Promise<void>) {
    super(`internal: ${what} is not loaded`);
    this.load = load;
  }
}

/**
 * Runs `verb` (a verb's whole store transaction) and, each time it stops with
 * a `LoadPending` before its first write, loads what was missing and runs it
 * once more: sync and close load the full authority check this way
 * (everyday.ts `requireEverydayHealth`). Each module loads once, so a verb
 * stops at most a few times.
 */
export async function runLoadingOnDemand<T>(verb: () => T): Promise<T> {
  for (let attempt = 0;; attempt++) {
    try {
      return verb();
    } catch (error) {
      if (!(error instanceof LoadPending) || attempt >= 3) throw error;
      await error.load();
    }
  }
}

/** Stands in for `cold_current` while the rest of state is serialized; a NUL keeps it unique. */
const COLD_PLACEHOLDER = "\u0000cold_current\u0000";
const COLD_SLOT = `\n  "cold_current": ${JSON.stringify(COLD_PLACEHOLDER)}`;

/**
 * The canonical bytes of `state`. An unchanged `cold_current` (most of a
 * large state) is copied from the bytes last read or written instead of
 * being serialized and encoded again.
 */
function stateBytes(paths: StorePaths, state: State): Uint8Array {
  const json = stateToJson(state);
  const cold = coldTextFor(paths, state.cold_current);
  if (cold !== null) {
    const parts = canonicalJson({ ...json, cold_current: COLD_PLACEHOLDER }).split(COLD_SLOT);
    if (parts.length === 2) {
      const before = utf8(`${parts[0]}\n  "cold_current": `);
      const after = utf8(parts[1]);
      const out = new Uint8Array(before.length + cold.bytes.length + after.length);
      out.set(before);
      out.set(cold.bytes, before.length);
      out.set(after, before.length + cold.bytes.length);
      return out;
    }
  }
  const text = canonicalJson(json);
  const bytes = utf8(text);
  rememberColdText(paths, text, bytes, state.cold_current);
  return bytes;
}

/**
 * Atomically replaces state.json with `state` in canonical JSON, then the
 * derived marks that let the next command skip work (the state mark and
 * the head check, head_cache.ts). `derived: false` leaves them to the command's next save
 * (a run of many commits in one command); meanwhile a mark that no longer
 * matches only costs the next reader its full check.
 */
export function saveState(
  paths: StorePaths,
  state: State,
  options: { derived?: boolean } = {},
): void {
  atomicReplace(paths.state, stateBytes(paths, state));
  if (options.derived === false) return;
  markOwnStateWrite(paths);
  recordNotedHead(paths, state);
}

/** Reads revision `n`'s exact text, or null if the file is missing. */
export function readRevision(paths: StorePaths, n: number): string | null {
  const bytes = readBytesOrNull(paths.revision(n));
  return bytes === null ? null : decodeUtf8Strict(bytes);
}

/**
 * Refuses older memory files beside the store (see legacy_root.ts). Files a
 * v1-v3 migration claims but has not retired yet are a pending retirement,
 * which a writer's runner finishes (commands/run.ts); a reader only reports
 * it, as it never writes.
 */
export function refuseLegacyRootFiles(
  paths: StorePaths,
  state: State,
  role: "writer" | "reader",
): void {
  const files = legacyRootFiles(paths.root, paths.view);
  if (files.length === 0) return;
  if (state.extras.legacy_migration !== LEGACY_MIGRATION) throw unclaimedLegacyRootsError(files);
  throw role === "writer" ? new LegacyRetirementPending(files) : pendingRetirementError(files);
}

/** The older v5 state versions a writer upgrades before it runs, as the reference's loader does. */
export const UPGRADABLE_V5_VERSIONS = ["5.0", "5.0.1", "5.0.2"] as const;

/**
 * A writer found a v5.0, v5.0.1 or v5.0.2 state. The command runner
 * (commands/run.ts) performs the state upgrade `migrate` performs (exact old
 * state kept in .bimri/backups/, metadata-only revision, view sync) and runs
 * the command again; anything else reports the message.
 */
export class OlderV5FormatPending extends BimriError {
  /** The state's version. */
  readonly version: (typeof UPGRADABLE_V5_VERSIONS)[number];

  /** A pending upgrade from `version`, reported with the refusal `message`. */
  constructor(version: (typeof UPGRADABLE_V5_VERSIONS)[number], message: string) {
    super("store-corrupt", message);
    this.version = version;
  }
}

/** On a state refused by `loadState`: the pending upgrade when it is an older v5 state. */
function olderV5Pending(paths: StorePaths, error: unknown): OlderV5FormatPending | null {
  if (!(error instanceof BimriError) || error.code !== "store-corrupt") return null;
  try {
    const raw = JSON.parse(new TextDecoder().decode(Deno.readFileSync(paths.state)));
    const version = (UPGRADABLE_V5_VERSIONS as readonly unknown[]).includes(raw?.bimri_version)
      ? raw.bimri_version as (typeof UPGRADABLE_V5_VERSIONS)[number]
      : null;
    return version === null ? null : new OlderV5FormatPending(version, error.message);
  } catch {
    return null;
  }
}

/** Opens an existing store for reading without creating or changing anything. */
export function openExisting(paths: StorePaths): Store {
  refuseUnsafeLayout(paths);
  const state = loadState(paths);
  return { paths, state, head: headViews().loadHead(paths, state) };
}

/**
 * Runs `action` under the engine lock on a store that is created on first use.
 * The action receives the freshly loaded store.
 */
export function withStore<T>(
  root: string,
  action: (store: Store) => T,
  options: StoreOptions = {},
): T {
  const paths = new StorePaths(root);
  if (!storeExists(paths)) headViews().refuseOlderMemory(root, paths);
  ensureLayout(paths);
  return withEngineLock(paths, () => {
    initializeIfNeeded(paths);
    let state: State;
    try {
      state = loadState(paths);
    } catch (error) {
      throw olderV5Pending(paths, error) ?? error;
    }
    refuseLegacyRootFiles(paths, state, "writer");
    const foreign = foreignStates.has(state);
    if (options.withoutHead && !foreign) return action(storeWithoutHead(paths, state));
    const head = headViews().loadHead(paths, state, { recordVerified: true });
    if (foreign) requireColdAgreement({ paths, state, head });
    if (options.withoutHead) return action(storeWithoutHead(paths, state));
    return action({ paths, state, head });
  });
}

/** How withStore opens the store. */
export type StoreOptions = {
  /**
   * Skip reading and verifying the head revision, for an action that never
   * looks at accepted memory (journal): hashing and parsing a 48 KB view is
   * most of such a command's work. Touching `store.head` then throws.
   */
  withoutHead?: boolean;
};

function storeWithoutHead(paths: StorePaths, state: State): Store {
  return {
    paths,
    state,
    get head(): Head {
      throw new Error("internal: this command opened the store without its head revision");
    },
  };
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
