/**
 * The shapes of a shared store's local share state and context (what every
 * share module passes around), apart from the code that loads and saves them
 * (state.ts), so the modules state.ts uses can name them without a circle.
 */
import type { StorePaths } from "../store/paths.ts";
import type { Vector } from "./vector.ts";

/** Counts of what imports did (for status). */
export type ImportCounts = {
  applied: number;
  noop: number;
  superseded: number;
  conflicts: number;
  held: number;
  resolved: number;
};

/** The mutable local share state. */
export type ShareState = {
  replica: string;
  /** The absolute store path this replica ID belongs to. */
  storePath: string;
  /** The next seq this replica will export. */
  nextSeq: number;
  /** Highest contiguous seq imported per other replica (own: nextSeq - 1). */
  vector: Vector;
  /**
   * Shared events whose effect each key's current local generation carries
   * (kept in its own file and read only when needed: see keysOf).
   */
  keys: Record<string, string[]> | null;
  /**
   * Key events replayed from records past the saved cursor while `keys` was
   * not read yet (applied on top of the file when it is: see keysOf).
   */
  replayed: [string, string][];
  /** The source (proposal ID) of the last exported change. */
  lastSource: string | null;
  /** A resolution whose record is not written yet. */
  pendingResolution: string | null;
  /**
   * Events whose effects a pull decided to commit and saved before committing
   * them (with the vector and key map that assume them): a pull killed
   * part-way leaves them here for `finishImport`.
   */
  importing: string[];
  /** Import proposals that became conflict candidates, by proposal ID -> event. */
  candidates: Record<string, string>;
  /** Replica IDs this store wrote under before it was copied or moved. */
  retired: string[];
  counts: ImportCounts;
  /** `share init` is exporting the existing memory as seed records (a crash resumes it). */
  seeding: boolean;
  /** Own records 1..keptThrough have their bytes kept under `.bimri/share-sent/`. */
  keptThrough: number;
  /** Seqs of other replicas imported past a gap (beyond `vector`), per replica. */
  ahead: Record<string, number[]>;
  /**
   * The head revision when the share bookkeeping last matched the store (-1:
   * not known yet). A head beyond it was moved by another engine (the
   * reference commits without exporting): its changes are exported then.
   */
  headSeen: number;
  /**
   * `state.head_hash` at `headSeen` (null: recorded by an earlier bimri). The
   * store's history must still hold it before a head beyond `headSeen` is
   * exported as another engine's: a `.bimri/` replaced under this clone (a
   * checkout of a branch that tracks it) would otherwise be signed as its own.
   */
  headSeenHash: string | null;
  /** A pull is running (true on disk after a pull was killed part-way). */
  pulling: boolean;
  /** The own record folder's mtime when every own record was last seen in it. */
  folderMtime: number | null;
  /**
   * Per other replica, its folder's mtime (ms) when a pull last found none of
   * its records waiting: while the folder keeps that mtime, an everyday start
   * counts no record of it waiting without listing the folder (idle.ts).
   */
  quiet: Record<string, number>;
};

/** A shared store's context: its paths and share state. */
export type ShareContext = {
  paths: StorePaths;
  shareDir: string;
  state: ShareState;
};
