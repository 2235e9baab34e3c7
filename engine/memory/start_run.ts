/**
 * Starting (or resuming) a run: start's and its hook's one write. Kept apart
 * from runs.ts so close and status, which read runs, do not load its view
 * check and log creation.
 */
import { BimriError } from "../errors.ts";
import { requireActor, runId } from "../model/ids.ts";
import type { TextScreen } from "../model/unsafe_text.ts";
import { localDate, utcTimestamp } from "../model/time.ts";
import { pathExists } from "../store/files.ts";
import { invalidateAuditWitness, saveState, type Store } from "../store/store.ts";
import { createRunLog, runLogHeader } from "./run_log.ts";
import { syncViewOnDemand } from "./view_on_demand.ts";
import {
  headSummary,
  orphanCandidates,
  sessionKey,
  type StartResult,
  trimRunDates,
  validateSession,
} from "./runs.ts";

/**
 * Starts a run for `actor`, or resumes the run mapped to the same actor and
 * session; `screen` refuses a credential in the session.
 */
export function startRun(
  store: Store,
  actorInput: string,
  sessionInput: string | undefined,
  screen: TextScreen,
): StartResult {
  const actor = requireActor(actorInput);
  const session = sessionInput ? validateSession(sessionInput) : undefined;
  if (session !== undefined) screen.refuseCredentials(session, "session");
  const sync = syncViewOnDemand(store);
  const state = store.state;
  const base = {
    actor,
    date: localDate(),
    notices: sync.notices,
    warnings: sync.warnings,
  };
  const key = session === undefined ? null : sessionKey(actor, session);
  if (key !== null) {
    const mapped = state.session_runs[key];
    if (mapped && state.active_runs[mapped]) {
      return {
        ...base,
        run: mapped,
        resumed: true,
        head: headSummary(store),
        orphans: orphanCandidates(state, mapped),
      };
    }
  }
  let n = state.run_count + 1;
  while (n <= 999999 && pathExists(store.paths.log(runId(n)))) n++;
  if (n > 999999) throw new BimriError("refused", "the store has used every run number (999999).");
  const run = runId(n);
  const startedAt = utcTimestamp();
  if (!createRunLog(store.paths, run, runLogHeader(run, startedAt, actor, state.head_revision))) {
    throw new BimriError("io", `the log of ${run} appeared while starting; retry start.`);
  }
  state.run_count = n;
  state.run_dates[run] = base.date;
  state.active_runs[run] = {
    actor,
    base_revision: state.head_revision,
    last_activity_at: startedAt,
    session_key: key,
    started_at: startedAt,
  };
  if (key !== null) state.session_runs[key] = run;
  state.last_started_at = startedAt;
  trimRunDates(store);
  // The reference's audit checkpoint covers the run lifecycle (active runs,
  // run count, sessions, run dates): without it, it re-proves the store
  // silently instead of recording unexplained drift.
  invalidateAuditWitness(store.paths);
  saveState(store.paths, state);
  return {
    ...base,
    run,
    resumed: false,
    head: headSummary(store),
    orphans: orphanCandidates(state, run),
  };
}
