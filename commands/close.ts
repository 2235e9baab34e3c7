/** `close` and `recover-run`: apply a run's pending proposals and end it. */
import { closeInput, DEFAULT_SUMMARY, endRun, requireOutcome } from "../engine/memory/end_run.ts";
import { resolveCloseTarget } from "../engine/memory/runs.ts";
import { loadTextScreen, requireActiveRun } from "../engine/memory/run_input.ts";
import { cleanScalar, requireRunId } from "../engine/model/ids.ts";
import { runLoadingOnDemand, type Store, withStore } from "../engine/store/store.ts";
import type { TextScreen } from "../engine/model/unsafe_text.ts";
import {
  type Command,
  type CommandResult,
  type FlagValues,
  ok,
  requiredFlag,
  stringFlag,
} from "./command.ts";
import { memoryCounts, summaryJson } from "./render.ts";

function closeText(run: string, counts: string, notices: string[]): string {
  const lines = [...notices, `BIMRI: run ${run} closed.${counts ? ` Memory: ${counts}.` : ""}`];
  return lines.join("\n") + "\n";
}

/** Ends `run` (end_run.ts) and reports it; `extra` JSON fields follow `closed`. */
function endAndReport(
  store: Store,
  run: string,
  flags: FlagValues,
  summary: string | undefined,
  screen: TextScreen,
  extra: Record<string, unknown> = {},
): CommandResult {
  const result = endRun(store, run, stringFlag(flags, "outcome") ?? "partial", summary, screen);
  return ok(
    closeText(run, memoryCounts(result.memory), result.memory.notices),
    { run, closed: true, ...extra, outcome: result.outcome, memory: summaryJson(result.memory) },
    [...result.notices, ...result.warnings],
  );
}

/** The close verb. */
export const closeCommand: Command = {
  name: "close",
  summary: "apply the run's pending proposals, record its outcome and end it",
  help:
    `usage: bimri close [--run RUN | --actor ACTOR --session SESSION] [--outcome OUTCOME] [--summary TEXT]

  --run RUN          the run to close (required when several runs are active)
  --actor, --session close the run mapped to this harness session
  --outcome OUTCOME  success, partial, overflow or fail (default partial)
  --summary TEXT     one line, at most 1000 characters`,
  flags: {
    run: { type: "string" },
    actor: { type: "string" },
    session: { type: "string" },
    outcome: { type: "string" },
    summary: { type: "string" },
  },
  async run(ctx, flags) {
    // Refused input must not create a store in an empty folder. The credential
    // rules load only when the summary could hold a credential or a policy
    // file exists (the policy is read now, as before anything else is checked).
    const summary = stringFlag(flags, "summary");
    const screen = await loadTextScreen(ctx.root, [summary || DEFAULT_SUMMARY], true);
    closeInput(stringFlag(flags, "outcome") ?? "partial", summary, screen);
    // The full authority check loads only when the summary cannot vouch (everyday.ts).
    return runLoadingOnDemand(() =>
      withStore(ctx.root, (store) => {
        const run = resolveCloseTarget(store.state, {
          run: stringFlag(flags, "run"),
          actor: stringFlag(flags, "actor"),
          session: stringFlag(flags, "session"),
        });
        return endAndReport(store, run, flags, summary, screen);
      })
    );
  },
};

/** The recover-run verb. */
export const recoverRunCommand: Command = {
  name: "recover-run",
  summary: "close an orphaned run after the owner confirmed it should end",
  help: `usage: bimri recover-run --run RUN --summary TEXT [--outcome OUTCOME]

  --run RUN          the orphaned run to close
  --summary TEXT     why it is being closed (one line)
  --outcome OUTCOME  success, partial, overflow or fail (default partial)`,
  flags: { run: { type: "string" }, summary: { type: "string" }, outcome: { type: "string" } },
  async run(ctx, flags) {
    const runInput = requiredFlag(flags, "recover-run", "run");
    const run = requireRunId(runInput);
    const summary = cleanScalar(
      requiredFlag(flags, "recover-run", "summary"),
      "recovery summary",
      1000,
    );
    const screen = await loadTextScreen(ctx.root, [summary], true);
    screen.refuseUnsafe(summary, "recovery summary");
    requireOutcome(stringFlag(flags, "outcome") ?? "partial");
    return runLoadingOnDemand(() =>
      withStore(ctx.root, (store) => {
        requireActiveRun(store.state, run);
        return endAndReport(store, run, flags, summary, screen, { recovered: true });
      })
    );
  },
};
