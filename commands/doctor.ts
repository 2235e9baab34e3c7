/** `doctor` (alias `validate`): audit the store; `--read-only` writes nothing at all. */
import { auditStore } from "../engine/integrity/doctor.ts";
import { StorePaths } from "../engine/store/paths.ts";
import { withStore } from "../engine/store/store.ts";
import { syncView } from "../engine/memory/view_sync.ts";
import { boolFlag, type Command, type CommandResult } from "./command.ts";

function render(readOnly: boolean, passed: boolean, errors: string[], warnings: string[]): string {
  const title = `BIMRI doctor${readOnly ? " (read-only)" : ""}: ${passed ? "PASSED" : "FAILED"}`;
  return [title, ...errors.map((e) => `  - ${e}`), ...warnings.map((w) => `  - ${w}`)].join("\n") +
    "\n";
}

/** The doctor verb. */
export const doctorCommand: Command = {
  name: "doctor",
  aliases: ["validate"],
  summary: "audit the store's integrity (exit 1 on any error)",
  help: `usage: bimri doctor [--read-only]

  --read-only  audit with zero writes (no layout, view healing, index or recovery records)`,
  flags: { "read-only": { type: "boolean" } },
  run(ctx, flags): CommandResult {
    const readOnly = boolFlag(flags, "read-only");
    let notices: string[] = [];
    if (!readOnly) {
      notices = withStore(ctx.root, (store) => {
        const sync = syncView(store);
        return [...sync.notices, ...sync.warnings];
      });
    }
    const report = auditStore(new StorePaths(ctx.root));
    return {
      exitCode: report.passed ? 0 : 1,
      text: render(readOnly, report.passed, report.errors, report.warnings),
      stderr: notices,
      data: {
        passed: report.passed,
        read_only: readOnly,
        errors: report.errors,
        warnings: report.warnings,
      },
    };
  },
};
