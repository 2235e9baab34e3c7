/**
 * The hook through which team memory's export finishes a commit a crash cut
 * short (commit.ts finalizeInterruptedCommit) without loading the commit
 * machinery: commit.ts registers itself here when it loads. Every verb that
 * commits loads it; `start` on a shared store loads it only when the head's
 * last commit was left applying, and otherwise starts without it.
 */
import { BimriError } from "../errors.ts";
import type { Store } from "../store/store.ts";
import { readDecision } from "../records/decision.ts";

/**
 * The proposal of the head's last commit when a crash left it unfinished:
 * the head's reason is `accepted <id>` while that decision is still
 * `applying` (one decision read). Null otherwise.
 */
export function headCommitLeftApplying(store: Store): string | null {
  const reason = /^accepted (R[0-9]{6}-Q[0-9]{3})$/.exec(store.state.last_revision_reason ?? "");
  if (reason === null) return null;
  return readDecision(store.paths, reason[1])?.outcome === "applying" ? reason[1] : null;
}

/** commit.ts finalizeInterruptedCommit: the finished proposal ID, or null. */
export type CommitFinisher = (store: Store) => string | null;

let finisher: CommitFinisher | null = null;

/** Registers commit.ts's finisher (commit.ts does, once, when it loads). */
export function registerCommitFinisher(registered: CommitFinisher): void {
  finisher = registered;
}

/** The registered finisher, or null when commit.ts is not loaded in this process. */
export function commitFinisher(): CommitFinisher | null {
  return finisher;
}

/**
 * Thrown under the engine lock, before anything is written, when a commit
 * left applying must be finished and commit.ts is not loaded: `start` then
 * loads it and runs once more (start_recovery.ts). Elsewhere it reads as a
 * busy store.
 */
export class CommitFinisherNeeded extends BimriError {
  /** A busy refusal that says to run the command again. */
  constructor() {
    super(
      "busy",
      "a commit a crash left unfinished must be finished first, and this command had not loaded the commit machinery; nothing was changed. Run the command again.",
    );
  }
}
