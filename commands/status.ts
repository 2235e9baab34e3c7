/** `status`: versions, revision, runs, residency, reviews and outcomes. */
import { statusReport } from "../engine/memory/status.ts";
import { withStore } from "../engine/store/store.ts";
import { revisionName } from "../engine/model/ids.ts";
import { AUTHORITY_FORMAT, ENGINE_COMPAT_RELEASE } from "../engine/versions.ts";
import { type Command, ok } from "./command.ts";

/** The status verb. */
export const statusCommand: Command = {
  name: "status",
  summary: "print the store's revision, runs, residency, reviews and outcomes",
  help: "usage: bimri status",
  flags: {},
  run(ctx) {
    return withStore(ctx.root, (store) => {
      const r = statusReport(store);
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
      if (r.orphans.length > 0) {
        lines.push(`Orphan candidates (never auto-closed): ${r.orphans.join(", ")}`);
      }
      lines.push(
        `Hot: ~${r.head.tokens} tokens | bytes ${r.hotBytes}/${r.hotMaxBytes} hard ceiling | T1 ${t1} (soft target ${s1}) | T2 ${t2} (soft target ${s2}) | T3 ${t3} (soft target ${s3})`,
        `Cold current: ${r.coldCurrent} | Held candidates: ${r.heldCandidates}`,
        `Open conflicts: ${r.openConflicts} | proposals: ${r.proposals} | revisions: ${r.revisions}`,
        `Actionable concurrent conflicts: ${r.actionableConflicts} | Legacy review records: ${r.legacyReviews} | Recovery reviews: ${r.recoveryReviews} | Satisfied historical candidates: ${r.satisfiedCandidates}`,
      );
      const outcomes = Object.keys(r.outcomes).sort().map((k) => `${k}=${r.outcomes[k]}`);
      if (outcomes.length > 0) lines.push(`Outcomes: ${outcomes.join(", ")}`);
      return ok(lines.join("\n") + "\n", {
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
        held_candidates: r.heldCandidates,
        open_conflicts: r.openConflicts,
        proposals: r.proposals,
        revisions: r.revisions,
        actionable_conflicts: r.actionableConflicts,
        legacy_reviews: r.legacyReviews,
        recovery_reviews: r.recoveryReviews,
        satisfied_candidates: r.satisfiedCandidates,
        outcomes: r.outcomes,
      });
    });
  },
};
