/**
 * Ending a run: `close` and `recover-run` apply the run's pending proposals,
 * record its outcome once and free its handle, screening the summary with
 * the text screen the caller chose (run_input.ts `loadTextScreen`, which
 * loads the credential rules only when they could matter).
 */
import { cleanScalar } from "../model/ids.ts";
import { BimriError } from "../errors.ts";
import { utcTimestamp } from "../model/time.ts";
import { faultPoint } from "../store/fault.ts";
import { invalidateAuditWitness, LoadPending, saveState, type Store } from "../store/store.ts";
import { applyPendingProposals, type ApplySummary, resolutionFinisherNeeded } from "./commit.ts";
import { shareObserver } from "./share_observer.ts";
import { appendClosure, readRunLog, scanRunLog } from "./run_log.ts";
import { syncView } from "./view_sync.ts";
import type { TextScreen } from "../model/unsafe_text.ts";
import {
  refreshAuthoritySummary,
  requireEverydayHealth,
  requireFullAuthorityCheck,
} from "../integrity/everyday.ts";
import { renewStaleHistoryDigest } from "../retrieval/history_digest.ts";

/** Close outcomes. */
export const OUTCOMES = ["success", "partial", "overflow", "fail"] as const;
/** Default close summary. */
export const DEFAULT_SUMMARY = "session ended without a detailed outcome";

/** Result of `close` and `recover-run`. */
export type CloseResult = {
  run: string;
  outcome: string;
  memory: ApplySummary;
  notices: string[];
  warnings: string[];
};

/** Validates a close outcome. */
export function requireOutcome(value: string): string {
  if (!(OUTCOMES as readonly string[]).includes(value)) {
    throw new BimriError("invalid-input", `outcome must be one of ${OUTCOMES.join(", ")}.`);
  }
  return value;
}

/**
 * The checked outcome and summary of a close. The reference checks them
 * before it touches the folder, so callers run this before opening the
 * store: a refused close never creates one.
 */
export function closeInput(
  outcomeInput: string,
  summaryInput: string | undefined,
  screen: TextScreen,
): { outcome: string; summary: string } {
  const outcome = requireOutcome(outcomeInput);
  // An omitted or empty summary is the default; a blank one is refused.
  const summary = cleanScalar(summaryInput || DEFAULT_SUMMARY, "outcome summary", 1000);
  screen.refuseUnsafe(summary, "outcome summary");
  return { outcome, summary };
}

/**
 * Closes `run`: applies its pending proposals, writes OUTCOME and CLOSED
 * once, frees the handle; `screen` screens the summary.
 */
export function endRun(
  store: Store,
  run: string,
  outcomeInput: string,
  summaryInput: string | undefined,
  screen: TextScreen,
): CloseResult {
  const { outcome, summary } = closeInput(outcomeInput, summaryInput, screen);
  shareObserver(store)?.beforeWrites(store);
  const sync = syncView(store, () => requireFullAuthorityCheck(loadFullCheck));
  requireEverydayHealth(store, sync.notices, loadFullCheck);
  if (resolutionFinisherNeeded(store)) {
    throw new LoadPending("the resolution finisher (resolve.ts)", loadResolutionFinisher);
  }
  shareObserver(store)?.finishPendingExports(store);
  const memory = applyPendingProposals(store, run);
  const facts = scanRunLog(run, readRunLog(store.paths, run));
  const closedAt = utcTimestamp();
  if (!facts.closed) appendClosure(store.paths, run, outcome, summary, closedAt);
  faultPoint("close-after-closure");
  const state = store.state;
  const entry = state.active_runs[run];
  const session = entry?.session_key;
  if (typeof session === "string" && session && state.session_runs[session] === run) {
    delete state.session_runs[session];
  }
  delete state.active_runs[run];
  state.last_closed_at = closedAt;
  // The run lifecycle is part of the reference's audit checkpoint (see runs.ts).
  invalidateAuditWitness(store.paths);
  saveState(store.paths, state);
  refreshAuthoritySummary(store);
  // Last, after every durable step: a search digest that no longer vouches
  // for the archive (a copy, a clone, another engine's rows) would leave each
  // `recall --query` reading the whole archive until someone ran `index`.
  renewStaleHistoryDigest(store.paths);
  return {
    run,
    outcome,
    memory,
    notices: [...sync.notices],
    warnings: [...sync.warnings, ...memory.warnings],
  };
}

/** Loads the full authority check, which registers itself with everyday.ts as it loads. */
async function loadFullCheck(): Promise<void> {
  await import("../integrity/authority.ts");
}

/** Loads resolve.ts, which registers its resolution finisher with commit.ts as it loads. */
async function loadResolutionFinisher(): Promise<void> {
  await import("./resolve.ts");
}
