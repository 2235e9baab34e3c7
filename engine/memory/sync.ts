/**
 * `sync` of one run: apply its pending proposals through the commit protocol,
 * then move the run's base to the accepted head.
 */
import { BimriError } from "../errors.ts";
import { requireRunId } from "../model/ids.ts";
import { utcTimestamp } from "../model/time.ts";
import { LoadPending, saveState, type Store } from "../store/store.ts";
import {
  refreshAuthoritySummary,
  requireEverydayHealth,
  requireFullAuthorityCheck,
} from "../integrity/everyday.ts";
import { applyPendingProposals, type ApplySummary, resolutionFinisherNeeded } from "./commit.ts";
import { syncView } from "./view_sync.ts";
import { shareObserver } from "./share_observer.ts";

/** Result of `sync`. */
export type SyncResult = { run: string; memory: ApplySummary; notices: string[] };

/**
 * `sync`: apply the run's pending proposals now, then move the run's base to
 * the accepted head (must run under the engine lock).
 */
export function syncRun(store: Store, runInput: string): SyncResult {
  const sync = syncView(store, () => requireFullAuthorityCheck(loadFullCheck));
  const run = requireRunId(runInput);
  if (!store.state.active_runs[run]) {
    throw new BimriError("unknown-run", `${run} is not an active run.`);
  }
  requireEverydayHealth(store, sync.notices, loadFullCheck);
  if (resolutionFinisherNeeded(store)) {
    throw new LoadPending("the resolution finisher (resolve.ts)", loadResolutionFinisher);
  }
  shareObserver(store)?.finishPendingExports(store);
  const memory = applyPendingProposals(store, run);
  const entry = store.state.active_runs[run];
  entry.base_revision = store.head.revision;
  entry.last_activity_at = utcTimestamp();
  saveState(store.paths, store.state);
  refreshAuthoritySummary(store);
  return { run, memory, notices: [...sync.notices, ...sync.warnings] };
}

/** Loads the full authority check, which registers itself with everyday.ts as it loads. */
async function loadFullCheck(): Promise<void> {
  await import("../integrity/authority.ts");
}

/** Loads resolve.ts, which registers its resolution finisher with commit.ts as it loads. */
async function loadResolutionFinisher(): Promise<void> {
  await import("./resolve.ts");
}
