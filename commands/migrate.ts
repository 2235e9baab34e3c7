/** `migrate`: bring an older store to the 5.1.0 authority format, or verify/initialize a current one. */
import { migrateStore } from "../engine/migrate/mod.ts";
import { boolFlag, type Command, type CommandResult } from "./command.ts";

/** The migrate verb. */
export const migrateCommand: Command = {
  name: "migrate",
  summary: "migrate v1-v4 and v5.0.x memory to format v5.1.0 (or verify a current store)",
  help: `usage: bimri migrate [--quiescent]

  --quiescent  attest that no agent, engine or sync tool is using the folder
               (required to activate a v5.0, v5.0.1 or v5.0.2 store)`,
  flags: { quiescent: { type: "boolean" } },
  run(ctx, flags): CommandResult {
    const receipt = migrateStore(ctx.root, { quiescent: boolFlag(flags, "quiescent") });
    const { lines, ...data } = receipt;
    return {
      exitCode: receipt.validation === "PASSED" ? 0 : 1,
      text: lines.join("\n") + "\n",
      data,
    };
  },
};
