/**
 * What `start` (and its hook) finishes once its check found the store
 * healthy: the commit and the owner answers a crash left applying whose
 * effect is already committed.
 */
import type { Store } from "../store/store.ts";
import { refreshAuthoritySummary, unchangedSinceHealthyWrite } from "../integrity/authority.ts";
import { finalizeInterruptedCommit } from "./commit.ts";
import { finalizeCommittedResolutions } from "./resolve.ts";

/**
 * For `start`, once its check found the store healthy: finishes the commit
 * and the answers a crash left applying whose effect is already committed (as
 * sync and close do), then records the summary again, since those records are
 * this command's own change. Returns the proposal and conflict IDs it finished.
 */
export function finishCommittedAnswersAtStart(store: Store): string[] {
  // Right after a crash the store shows an unexplained change, and start
  // finishes the cut-short commit then. On a store unchanged since a healthy
  // write the everyday start does not look (reading the record costs a few ms):
  // sync, close and resolve still finish one before they move the head.
  const commit = unchangedSinceHealthyWrite(store) ? null : finalizeInterruptedCommit(store);
  const finished = finalizeCommittedResolutions(store);
  if (commit !== null || finished.length > 0) refreshAuthoritySummary(store);
  return commit === null ? finished : [commit, ...finished];
}
