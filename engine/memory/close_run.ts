/**
 * Ending a run for a caller that has no text screen of its own (share pull
 * and import, a redaction, hook-close): the owner's policy screens the
 * summary, read now as the close begins; end_run.ts does the rest.
 */
import { textScreenOf } from "../guard/policy.ts";
// These callers cannot run again on LoadPending: the full authority check and
// the resolution finisher load with them, as they always did (see everyday.ts
// requireEverydayHealth and commit.ts resolutionFinisherNeeded).
import "../integrity/authority.ts";
import "./resolve.ts";
import type { Store } from "../store/store.ts";
import { type CloseResult, endRun } from "./end_run.ts";

/** Closes `run` as end_run.ts `endRun` does, screening the summary with the owner's policy. */
export function closeRun(
  store: Store,
  run: string,
  outcomeInput: string,
  summaryInput: string | undefined,
): CloseResult {
  return endRun(store, run, outcomeInput, summaryInput, textScreenOf(store.paths.root, true));
}
