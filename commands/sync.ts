/** `sync --run R`: apply the run's pending proposals now and refresh its base. */
import { syncRun } from "../engine/memory/sync.ts";
import { runLoadingOnDemand, withStore } from "../engine/store/store.ts";
import { type Command, ok, requiredFlag } from "./command.ts";
import { summaryJson, syncCounts } from "./render.ts";

/** The sync verb. */
export const syncCommand: Command = {
  name: "sync",
  summary: "apply the run's pending proposals and move its base to the accepted head",
  help: `usage: bimri sync --run RUN

  --run RUN   the run whose proposals to apply

Prints held notices and new conflict notices, then
BIMRI: synced RUN; applied N, held candidates N, already satisfied/no change N,
new concurrent conflicts N, agent-action failures N.`,
  flags: { run: { type: "string" } },
  run(ctx, flags) {
    const runInput = requiredFlag(flags, "sync", "run");
    // The full authority check loads only when the summary cannot vouch (everyday.ts).
    return runLoadingOnDemand(() =>
      withStore(ctx.root, (store) => {
        const result = syncRun(store, runInput);
        const lines = [
          ...result.memory.notices,
          `BIMRI: synced ${result.run}; ${syncCounts(result.memory)}.`,
        ];
        return ok(lines.join("\n") + "\n", {
          run: result.run,
          revision: store.head.revision,
          memory: summaryJson(result.memory),
          notices: result.memory.notices,
        }, [...result.notices, ...result.memory.warnings]);
      })
    );
  },
};
