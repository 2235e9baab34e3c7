/**
 * The hook through which team memory's export finishes a commit a crash cut
 * short (commit.ts finalizeInterruptedCommit) without loading the commit
 * machinery: commit.ts registers itself here when it loads. Every verb that
 * commits loads it; `start` on a shared store loads it only when the head's
 * last commit was left applying, and otherwise starts without it.
 */
import { BimriError } from "../errors.ts";
import type { Store } from "../store/store.ts";

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
