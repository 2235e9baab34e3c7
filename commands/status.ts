/** `status`: versions, revision, runs, residency, held candidates, reviews and outcomes. */
import { HELD_LINES_SHOWN, heldLine, statusReport } from "../engine/memory/status.ts";
import { syncView } from "../engine/memory/view_sync.ts";
import { authorityStatusLines } from "../engine/integrity/status_check.ts";
import { withStore } from "../engine/store/store.ts";
import { StorePaths } from "../engine/store/paths.ts";
import { claimOfState, requireLineage } from "../engine/records/legacy_claim.ts";
import { loadRecordProver } from "../engine/migrate/lineage_prover.ts";
import { revisionName } from "../engine/model/ids.ts";
import { AUTHORITY_FORMAT, ENGINE_COMPAT_RELEASE } from "../engine/versions.ts";
import type { Command, CommandResult } from "./command.ts";

/** The status verb. */
export const statusCommand: Command = {
  name: "status",
  summary: "print the store's revision, runs, residency, reviews and outcomes",
  help: `usage: bimri status

Prints the engine and memory-format versions, the accepted revision, runs
(every active one with its actor; --json also lists the orphan candidates), hot
bytes against the ceiling, tier counts against their soft targets, cold
current subjects, held candidates, open conflicts and review groups, and
run outcomes. Exit 1 (with the full list) when authority records need
recovery.`,
  flags: {},
  async run(ctx): Promise<CommandResult> {
    // The converter that proves a v1-v3 record loads only for a store that has one.
    const prover = await loadRecordProver(new StorePaths(ctx.root));
    return withStore(ctx.root, (store) => {
      requireLineage(store.paths, claimOfState(store.state), prover);
      const sync = syncView(store);
      const authority = authorityStatusLines(store);
      const r = statusReport(store, authority.issues.length > 0);
      const [t1, t2, t3] = r.head.tiers;
      const [s1, s2, s3] = r.head.softTargets;
      const lines = [
        `BIMRI engine v${ENGINE_COMPAT_RELEASE} | memory format v${AUTHORITY_FORMAT} | revision ${
          revisionName(r.revision)
        } | runs ${r.runs} | active ${r.active.length}`,
      ];
      if (r.active.length > 0) {
        lines.push(`Active runs: ${r.active.map((a) => `${a.run} (${a.actor})`).join(", ")}`);
      }
      lines.push(
        `Hot: ~${r.head.tokens} tokens | bytes ${r.hotBytes}/${r.hotMaxBytes} hard ceiling | T1 ${t1} (soft target ${s1}) | T2 ${t2} (soft target ${s2}) | T3 ${t3} (soft target ${s3})`,
        `Cold current: ${r.coldCurrent} | Held candidates: ${r.held.length}`,
        ...r.held.slice(0, HELD_LINES_SHOWN).map(heldLine),
        `Open conflicts: ${r.openConflicts} | proposals: ${r.proposals} | revisions: ${r.revisions}`,
        `Actionable concurrent conflicts: ${r.actionableConflicts} | Legacy review records: ${r.legacyReviews} | Recovery reviews: ${r.recoveryReviews} | Satisfied historical candidates: ${r.satisfiedCandidates}`,
      );
      const outcomes = Object.keys(r.outcomes).sort().map((k) => `${k}=${r.outcomes[k]}`);
      if (outcomes.length > 0) lines.push(`Outcomes: ${outcomes.join(", ")}`);
      lines.push(...authority.lines);
      return {
        exitCode: authority.issues.length > 0 ? 1 : 0,
        text: lines.join("\n") + "\n",
        stderr: [...sync.notices, ...sync.warnings],
        data: {
          engine_version: ENGINE_COMPAT_RELEASE,
          memory_format: AUTHORITY_FORMAT,
          revision: r.revision,
          runs: r.runs,
          active_runs: r.active,
          orphan_candidates: r.orphans,
          hot_tokens: r.head.tokens,
          hot_bytes: r.hotBytes,
          hot_max_bytes: r.hotMaxBytes,
          tiers: r.head.tiers,
          soft_targets: r.head.softTargets,
          cold_current: r.coldCurrent,
          held_candidates: r.held.length,
          held: r.held,
          open_conflicts: r.openConflicts,
          proposals: r.proposals,
          revisions: r.revisions,
          actionable_conflicts: r.actionableConflicts,
          legacy_reviews: r.legacyReviews,
          recovery_reviews: r.recoveryReviews,
          satisfied_candidates: r.satisfiedCandidates,
          outcomes: r.outcomes,
          authority_issues: authority.issues.map((i) => `${i.kind} ${i.id}: ${i.problem}`),
        },
      };
    });
  },
};
