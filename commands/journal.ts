/** `journal --run R --text T [--importance N]`: append durable detail to a run's log. */
import { journal, journalInput } from "../engine/memory/journal.ts";
import { withStore } from "../engine/store/store.ts";
import { loadTextScreen } from "../engine/memory/run_input.ts";
import { type Command, ok, requiredFlag, stringFlag } from "./command.ts";

/** The journal verb. */
export const journalCommand: Command = {
  name: "journal",
  summary: "append a journal entry to a run's log; prints the entry ID",
  help: `usage: bimri journal --run RUN --text TEXT [--importance 1-5]

  --run RUN          the run handle from start
  --text TEXT        one line, at most 8000 characters
  --importance N     1 through 5 (default 3)`,
  flags: {
    run: { type: "string" },
    text: { type: "string" },
    importance: { type: "string", integer: true },
  },
  async run(ctx, flags) {
    const run = requiredFlag(flags, "journal", "run");
    const text = requiredFlag(flags, "journal", "text");
    const importance = stringFlag(flags, "importance");
    const screen = await loadTextScreen(ctx.root, [text], true);
    journalInput(text, importance, screen); // refused input must not create a store
    return withStore(ctx.root, (store) => {
      const result = journal(store, run, text, importance, screen);
      return ok(`${result.entry_id}\n`, { run: result.run, entry_id: result.entry_id });
    }, { withoutHead: true });
  },
};
