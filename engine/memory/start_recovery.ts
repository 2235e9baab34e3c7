/**
 * What `start` (and its hook) finishes once its check found the store
 * healthy: the commit and the owner answers a crash left applying whose
 * effect is already committed. The commit and resolve machinery that does it
 * loads only for a store where a crash may have left one of them.
 */
import type { Store } from "../store/store.ts";
import { listNames } from "../store/files.ts";
import { unchangedSinceHealthyWrite } from "../integrity/summary.ts";
import { refreshAuthoritySummary } from "../integrity/everyday.ts";
import { CommitFinisherNeeded } from "./commit_finisher.ts";

/** The two finishers a start may need (commit.ts and resolve.ts, loaded on demand). */
export type StartRecovery = {
  finalizeInterruptedCommit: (store: Store) => string | null;
  finalizeCommittedResolutions: (store: Store) => string[];
};

/** Loads commit.ts and resolve.ts for a start that may have something to finish. */
export async function loadStartRecovery(): Promise<StartRecovery> {
  const [commit, resolve] = await Promise.all([import("./commit.ts"), import("./resolve.ts")]);
  return {
    finalizeInterruptedCommit: commit.finalizeInterruptedCommit,
    finalizeCommittedResolutions: resolve.finalizeCommittedResolutions,
  };
}

/** Thrown under the lock, before anything is written, when a start needs the finishers loaded. */
class StartRecoveryNeeded extends Error {
  constructor() {
    super("internal: start needs its recovery modules");
  }
}

/**
 * Runs a start's locked `attempt` with the finishers it needs: first without
 * them; when `requireStartRecovery` finds that this store may have something
 * to finish, the attempt stops before writing anything, the finishers load,
 * and the attempt runs once more (on the everyday path it runs once).
 */
export async function withStartRecovery<T>(
  attempt: (recovery: StartRecovery | null) => T | Promise<T>,
): Promise<T> {
  try {
    return await attempt(null);
  } catch (error) {
    // Team memory's export stops the same way for a commit left applying (commit_finisher.ts).
    if (!(error instanceof StartRecoveryNeeded || error instanceof CommitFinisherNeeded)) {
      throw error;
    }
  }
  return await attempt(await loadStartRecovery());
}

/**
 * Call under the engine lock right after `proveBeforeStart` and before
 * anything is written: returns `recovery`, or stops the attempt (see
 * `withStartRecovery`) when it is null and `finishCommittedAnswersAtStart`
 * may find something to finish. That is when the store changed since its last healthy write and
 * its last revision accepted a proposal (the commit that may be cut short,
 * see commit.ts finalizeInterruptedCommit), or when any resolution exists
 * (an answer that may be applying, see resolve.ts finalizeCommittedResolutions).
 */
export function requireStartRecovery(
  store: Store,
  recovery: StartRecovery | null,
): StartRecovery | null {
  if (recovery !== null) return recovery;
  const mayFinishCommit = !unchangedSinceHealthyWrite(store) &&
    (store.state.last_revision_reason ?? "").startsWith("accepted ");
  if (
    mayFinishCommit || listNames(store.paths.folder("resolutions")).length > 0
  ) {
    throw new StartRecoveryNeeded();
  }
  return null;
}

/**
 * For `start`, once its check found the store healthy: finishes the commit
 * and the answers a crash left applying whose effect is already committed (as
 * sync and close do), then records the summary again, since those records are
 * this command's own change. Returns the proposal and conflict IDs it finished.
 * `recovery` is what `requireStartRecovery` returned: null when it found
 * nothing a crash could have left, so there is nothing to finish.
 */
export function finishCommittedAnswersAtStart(
  store: Store,
  recovery: StartRecovery | null,
): string[] {
  if (recovery === null) return [];
  // Right after a crash the store shows an unexplained change, and start
  // finishes the cut-short commit then. On a store unchanged since a healthy
  // write the everyday start does not look (reading the record costs a few ms):
  // sync, close and resolve still finish one before they move the head.
  const commit = unchangedSinceHealthyWrite(store)
    ? null
    : recovery.finalizeInterruptedCommit(store);
  const finished = recovery.finalizeCommittedResolutions(store);
  if (commit !== null || finished.length > 0) refreshAuthoritySummary(store);
  return commit === null ? finished : [commit, ...finished];
}
