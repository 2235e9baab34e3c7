/**
 * The hook through which team memory observes the write path without the
 * write path importing it (DESIGN.md section 3): the command layer wires
 * share's export here (commands/share_wiring.ts), and does so only for a
 * store that is shared, so the commands of an unshared store never load
 * engine/share/.
 *
 * Fail-closed: a shared store (its `.bimri/replica.local.json` exists) whose
 * command found nothing wired stops with a BimriError instead of skipping an
 * export. Before any write (`finishPendingExports`) nothing is changed; after
 * a commit the change is durable and the next command exports it, as after a
 * crash at that step.
 */
import { BimriError } from "../errors.ts";
import { lstatOrNull } from "../store/files.ts";
import type { Store } from "../store/store.ts";

/** What the write path tells team memory. */
export type ShareObserver = {
  /**
   * Under the engine lock, before the command writes anything: stops it
   * (to run once more) when what it loaded cannot do what is pending.
   */
  beforeWrites(store: Store): void;
  /**
   * Under the engine lock, before a command moves memory: exports (and
   * imports) that an earlier command left unfinished. Returns share's
   * context of the store, or null when the store is not shared.
   */
  finishPendingExports(store: Store): unknown;
  /**
   * Before a command commits a run's proposals, nothing written yet: refuses
   * when the command loaded no export (its share check found nothing to export).
   */
  beforeCommit(store: Store): void;
  /** After an accepted commit's decision is durable: the change's record for the other clones. */
  afterAcceptedCommit(store: Store, proposalId: string, actor: string): void;
};

/** The file under `.bimri/` whose presence makes a store shared (engine/share/state.ts). */
export const REPLICA_FILE = "replica.local.json";

let wired: ShareObserver | null = null;

/** Wires team memory's observer (commands/share_wiring.ts; null: unwires the idle check's). */
export function wireShareObserver(observer: ShareObserver | null): void {
  wired = observer;
}

/**
 * The observer for `store`'s writes, or null when nothing is wired and the
 * store is not shared (then there is nothing to export). Throws when the
 * store is shared but no observer was wired.
 */
export function shareObserver(store: Store): ShareObserver | null {
  if (wired !== null) return wired;
  if (lstatOrNull(store.paths.folder(REPLICA_FILE)) === null) return null;
  throw new BimriError(
    "busy",
    "this store became shared (.bimri/replica.local.json appeared) while the command was starting, so team memory was not loaded for it. Run the command again; anything it already committed is exported by the next command.",
  );
}
