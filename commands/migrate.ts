/** `migrate`: bring an older store to the 5.1.0 authority format, or verify/initialize a current one. */
import { migrateStore } from "../engine/migrate/mod.ts";
import { isOwnerNotice } from "../engine/migrate/receipt.ts";
import { BimriError } from "../engine/errors.ts";
import { prepareAudit } from "../engine/integrity/doctor.ts";
import { StorePaths } from "../engine/store/paths.ts";
import { type Command, type CommandResult, ok } from "./command.ts";

/** The migrate verb. */
export const migrateCommand: Command = {
  name: "migrate",
  summary: "migrate v1-v4 and v5.0.x memory to format v5.1.0 (or verify a current store)",
  help: `usage: bimri migrate

Detects the memory in the project and brings it to authority format v5.1.0:
v1-v3 tiered Markdown (BIMRI.md / bimri.md), v4 engine state, v5.0, v5.0.1
and v5.0.2 states (state upgrade: the exact old state is kept in
.bimri/backups/, then the view is synchronized, an edited bimri.md being
preserved as a manual-edit conflict). A current store is verified, its view
synchronized and its index rebuilt. An empty folder is initialized. Stop every
other agent and BIMRI process before migrating older memory: running this
command is the explicit request to migrate.`,
  flags: {},
  progress: () => "migrating the store",
  async run(ctx): Promise<CommandResult> {
    // The migration ends with a full audit.
    await prepareAudit(new StorePaths(ctx.root));
    const receipt = migrateStore(ctx.root, { quiescent: true });
    if (receipt.validation !== "PASSED") {
      // As in the reference: the migration's writes stand, the command fails.
      throw new BimriError(
        "refused",
        `migration validation failed: ${receipt.validation_errors.join("; ")}`,
      );
    }
    const { lines, ...data } = receipt;
    return ok(lines.join("\n") + "\n", data, receipt.warnings.filter(isOwnerNotice));
  },
};
