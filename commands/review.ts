/** `review [C######] [--all] [--offset N] [--limit N]`: read-only pull review of owner questions. */
import { BimriError } from "../engine/errors.ts";
import { recoveryBlock } from "../engine/integrity/authority.ts";
import { fullAuthorityIssues } from "../engine/integrity/status_check.ts";
import { requireConflictId } from "../engine/model/ids.ts";
import { checkReviewPaging, reviewReport } from "../engine/memory/review.ts";
import { heldReviewNotices } from "../engine/memory/status.ts";
import { withReadOnlyStore } from "../engine/retrieval/read_store.ts";
import { StorePaths } from "../engine/store/paths.ts";
import { storeExists } from "../engine/store/store.ts";
import { isShared } from "../engine/share/state.ts";
import { pendingTrustQuestions, type TrustQuestion } from "../engine/share/trust.ts";
import { boolFlag, type Command, type CommandResult, integerFlag, ok } from "./command.ts";

/** Owner questions about replicas of a shared store whose records wait (share/trust.ts). */
function trustQuestions(paths: StorePaths): TrustQuestion[] {
  if (!isShared(paths)) return [];
  try {
    return pendingTrustQuestions(paths);
  } catch (error) {
    if (error instanceof BimriError) return []; // share status and doctor report it
    throw error;
  }
}

/** The review verb. */
export const reviewCommand: Command = {
  name: "review",
  summary: "show owner questions: concurrent conflicts (default), or every review group",
  help: `usage: bimri review [C000001] [--all] [--offset N] [--limit N]

Read-only. Lists actionable concurrent conflicts with the live value, the
snapshot taken when each was raised, every proposed post-state and what each
choice does. Nothing is written.

  C000001      show only this conflict (open, recovery or satisfied)
  --all        also show legacy, recovery and satisfied-history groups
  --offset N   skip the first N records (default 0)
  --limit N    show at most N records, 1-100 (default 20)

The header states the total, the displayed range and how many remain.
Resolve with: bimri resolve C000001 --choose <proposal-id|current|dismiss> --human-approved`,
  flags: {
    all: { type: "boolean" },
    offset: { type: "string", integer: true },
    limit: { type: "string", integer: true },
  },
  positionals: 1,
  run(ctx, flags, positionals): CommandResult {
    const offset = integerFlag(flags, "offset") ?? 0;
    const limit = integerFlag(flags, "limit") ?? 20;
    checkReviewPaging(offset, limit);
    const conflictId = positionals[0] === undefined ? undefined : requireConflictId(positionals[0]);
    const paths = new StorePaths(ctx.root);
    if (!storeExists(paths)) {
      throw new BimriError(
        "store-unsafe",
        "there is no BIMRI store here (.bimri/state.json is missing); run start first or pass --root.",
      );
    }
    // Read-only under the shared lock: no layout or lock file is created.
    return withReadOnlyStore(ctx.root, (store) => {
      // Read-only: the full check, which writes no cache.
      const issues = fullAuthorityIssues(store.paths, store.state);
      if (issues.length > 0) {
        return {
          exitCode: 1,
          text: recoveryBlock(issues).join("\n") + "\n",
          data: { ok: false, authority_issues: issues },
        };
      }
      const report = reviewReport(store, {
        conflictId,
        all: boolFlag(flags, "all"),
        offset,
        limit,
      });
      // Held candidates and the command for each, on stderr.
      const held = heldReviewNotices(store);
      const trust = trustQuestions(store.paths);
      return ok(report.text + trust.map((q) => q.text + "\n").join(""), {
        trust_questions: trust.map((q) => ({
          replica: q.replica,
          standing: q.standing,
          waiting: q.waiting,
        })),
        counts: report.counts,
        total: report.total,
        offset,
        limit,
        displayed_first: report.first,
        displayed_last: report.last,
        remaining: report.remaining,
        records: report.records,
      }, held);
    });
  },
};
