/**
 * The commit protocol (protocol section 8): applies a run's pending proposals
 * in order through durable steps. Implemented by the proposals work.
 */
import type { Store } from "../store/store.ts";

/** What applying a run's pending proposals did. */
export type ApplySummary = {
  applied: number;
  held: number;
  noop: number;
  conflicts: number;
  failures: number;
  /** Lines for stdout printed before the summary (held notices, conflict blocks). */
  notices: string[];
  /** Warnings for stderr. */
  warnings: string[];
};

/** An empty summary. */
export function emptySummary(): ApplySummary {
  return { applied: 0, held: 0, noop: 0, conflicts: 0, failures: 0, notices: [], warnings: [] };
}

/** Applies every undecided proposal of `run`; updates `store.state` and `store.head` in place. */
export function applyPendingProposals(_store: Store, _run: string): ApplySummary {
  return emptySummary();
}
