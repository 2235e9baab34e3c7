/** `start [--actor A] [--session S]`: open (or resume) a run and print the brief. */
import { startRun } from "../engine/memory/start_run.ts";
import { loadTextScreen } from "../engine/memory/run_input.ts";
import { loadViewRepair } from "../engine/memory/view_on_demand.ts";
import { withStore } from "../engine/store/store.ts";
import { loadedShareWiring } from "./run.ts";
import { type Command, ok, stringFlag } from "./command.ts";
import { renderBrief } from "./render.ts";
import { authorityBriefLines, proveBeforeStart } from "../engine/integrity/authority.ts";
import {
  finishCommittedAnswersAtStart,
  requireStartRecovery,
  withStartRecovery,
} from "../engine/memory/start_recovery.ts";

/** The start verb. */
export const startCommand: Command = {
  name: "start",
  summary: "open a run handle (or resume a harness session's run) and print the brief",
  help: `usage: bimri start [--actor ACTOR] [--session SESSION]

  --actor ACTOR      slug naming the agent (codex, claude, ...; lowercased; default agent)
  --session SESSION  harness session identity; the same actor and session resume their run`,
  flags: { actor: { type: "string" }, session: { type: "string" } },
  async run(ctx, flags) {
    const actor = stringFlag(flags, "actor") ?? "agent";
    const session = stringFlag(flags, "session");
    // share_wiring.ts is loaded only when run.ts wired team memory (a shared store).
    const wiring = loadedShareWiring();
    // Team memory's exports run before startRun's view check: load the repair first
    // (not when its idle check found nothing to export: share_wiring.ts).
    if (wiring?.exportsWired()) await loadViewRepair();
    const screen = await loadTextScreen(ctx.root, [session]);
    return withStartRecovery((finishers) =>
      withStore(ctx.root, (store) => {
        proveBeforeStart(store);
        finishers = requireStartRecovery(store, finishers);
        const share = wiring === null ? null : wiring.finishShareAtStart(store);
        const result = startRun(store, actor, session, screen);
        const recovery = authorityBriefLines(store);
        if (recovery.issues.length === 0) finishCommittedAnswersAtStart(store, finishers);
        const report = share === null ? null : share();
        const waiting = report === null ? null : report.waiting;
        if (report !== null && waiting !== null) {
          recovery.lines.push(
            waiting > 0
              ? `Team memory: ${waiting} records from other clones are waiting; run \`bimri share pull\`.`
              : "Team memory: no records from other clones are waiting.",
            ...report.gaps,
          );
          if (report.unexported > 0) {
            // Written by the next export, as git needs them (share_wiring.ts IDLE_VERBS).
            recovery.lines.push(
              `Team memory: ${report.unexported} ${
                report.unexported === 1
                  ? "change of this clone waits"
                  : "changes of this clone wait"
              } for the next export to .bimri-share/: run \`bimri share status\` and \`git add .bimri-share\` before you commit (with the git hooks, \`bimri share hooks install\`, any commit of other work does both).`,
            );
          }
        }
        return ok(renderBrief(result, recovery.lines), {
          share_waiting: waiting,
          share_unexported: report?.unexported ?? null,
          run: result.run,
          resumed: result.resumed,
          actor: result.actor,
          date: result.date,
          revision: result.head.revision,
          tokens: result.head.tokens,
          tiers: result.head.tiers,
          soft_targets: result.head.softTargets,
          orphan_candidates: result.orphans,
          authority_recovery_needed: recovery.issues,
          brief: renderBrief(result, recovery.lines),
        }, [...result.notices, ...result.warnings]);
      })
    );
  },
};
