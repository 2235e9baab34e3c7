/** `status`: the store's numbers (engine and format versions, runs, residency, reviews, outcomes). */
import { isJsonObject, type JsonValue } from "../store/canonical_json.ts";
import { listNames, readTextOrNull } from "../store/files.ts";
import type { Store } from "../store/store.ts";
import { utf8Length } from "../model/text.ts";
import { type HeadSummary, headSummary, orphanCandidates } from "./runs.ts";

/** Everything `status` reports. */
export type StatusReport = {
  revision: number;
  runs: number;
  active: { run: string; actor: string }[];
  head: HeadSummary;
  hotBytes: number;
  hotMaxBytes: number;
  coldCurrent: number;
  heldCandidates: number;
  openConflicts: number;
  proposals: number;
  revisions: number;
  actionableConflicts: number;
  legacyReviews: number;
  recoveryReviews: number;
  satisfiedCandidates: number;
  outcomes: Record<string, number>;
  orphans: string[];
};

function readJson(path: string): JsonValue | null {
  const text = readTextOrNull(path);
  if (text === null) return null;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return null;
  }
}

/** Builds the status report (reads decisions, conflicts and logs: not an everyday-path command). */
export function statusReport(store: Store): StatusReport {
  const { paths, state } = store;
  const proposals = listNames(paths.folder("proposals")).filter((n) => n.endsWith(".json"));
  const revisions = listNames(paths.folder("revisions")).filter((n) => /^V[0-9]{6}\.md$/.test(n));
  let held = 0;
  for (const name of listNames(paths.folder("decisions"))) {
    if (!name.endsWith(".json")) continue;
    const decision = readJson(`${paths.folder("decisions")}/${name}`);
    if (isJsonObject(decision) && decision.outcome === "held") held++;
  }
  let open = 0;
  let actionable = 0;
  let legacy = 0;
  let recovery = 0;
  const resolutions = new Set(listNames(paths.folder("resolutions")));
  for (const name of listNames(paths.folder("conflicts"))) {
    if (!/^C[0-9]{6}\.json$/.test(name)) continue;
    const resolution = resolutions.has(name)
      ? readJson(`${paths.folder("resolutions")}/${name}`)
      : null;
    if (isJsonObject(resolution) && resolution.status === "resolved") continue;
    const conflict = readJson(`${paths.folder("conflicts")}/${name}`);
    open++;
    const type = isJsonObject(conflict) ? conflict.type : null;
    if (type === "stale-base") actionable++;
    else if (type === "manual-edit") recovery++;
    else legacy++;
  }
  const outcomes: Record<string, number> = {};
  for (const name of listNames(paths.folder("log"))) {
    const match = /^(R[0-9]{6})\.md$/.exec(name);
    if (!match) continue;
    const text = readTextOrNull(`${paths.folder("log")}/${name}`);
    if (text === null) continue;
    for (const line of text.split("\n")) {
      const outcome = /^\[OUTCOME:(success|partial|overflow|fail)\]/.exec(line);
      if (outcome) outcomes[outcome[1]] = (outcomes[outcome[1]] ?? 0) + 1;
    }
  }
  return {
    revision: state.head_revision,
    runs: state.run_count,
    active: Object.keys(state.active_runs).sort().map((run) => ({
      run,
      actor: state.active_runs[run].actor,
    })),
    head: headSummary(store),
    hotBytes: utf8Length(store.head.text),
    hotMaxBytes: state.hot_max_bytes,
    coldCurrent: Object.keys(state.cold_current).length,
    heldCandidates: held,
    openConflicts: open,
    proposals: proposals.length,
    revisions: revisions.length,
    actionableConflicts: actionable,
    legacyReviews: legacy,
    recoveryReviews: recovery,
    satisfiedCandidates: 0,
    outcomes,
    orphans: orphanCandidates(state),
  };
}
