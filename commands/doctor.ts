/** `doctor` (alias `validate`): audit the store; `--read-only` writes nothing at all. */
import { auditStore } from "../engine/integrity/doctor.ts";
import { forgetSummary } from "../engine/integrity/summary.ts";
import { StorePaths } from "../engine/store/paths.ts";
import { withStore } from "../engine/store/store.ts";
import { syncView } from "../engine/memory/view_sync.ts";
import { rebuildIndex } from "../engine/retrieval/index_tsv.ts";
import { BimriError } from "../engine/errors.ts";
import { boolFlag, type Command, type CommandResult } from "./command.ts";

function render(readOnly: boolean, passed: boolean, errors: string[], warnings: string[]): string {
  const title = `BIMRI doctor${readOnly ? " (read-only)" : ""}: ${passed ? "PASSED" : "FAILED"}`;
  // As the reference prints it: a FAILED report lists only the errors (scripts
  // count them), a PASSED one its warnings; --json carries both lists.
  const items = passed ? warnings : errors;
  return [title, ...items.map((item) => `  - ${item}`)].join("\n") + "\n";
}

/** The doctor verb. */
export const doctorCommand: Command = {
  name: "doctor",
  aliases: ["validate"],
  summary: "audit the store's integrity (exit 1 on any error)",
  help: `usage: bimri doctor [--read-only]

Audits state, revisions and the head hash, memory grammar and bounds, every
proposal, decision, conflict and resolution, the authority graph, recovery
evidence and restore receipts, run logs, pointers and the index. Prints PASSED
(with any warnings) or FAILED with one line per error (warnings then show
only in --json); exits 1 on any error.
Without --read-only it first heals bimri.md (preserving a manual edit) and,
when the audit finds no error, rebuilds the index.

  --read-only  audit with zero writes (no layout, view healing, index or recovery records)`,
  flags: { "read-only": { type: "boolean" } },
  run(ctx, flags): CommandResult {
    const readOnly = boolFlag(flags, "read-only");
    const stderr: string[] = [];
    const paths = new StorePaths(ctx.root);
    if (!readOnly) {
      try {
        withStore(ctx.root, (store) => {
          const sync = syncView(store);
          stderr.push(...sync.notices, ...sync.warnings);
        });
      } catch (error) {
        // A store too damaged to open is still audited; the audit names the damage.
        // A busy store is not damaged: auditing it while another command writes
        // would report half-made changes, so doctor stops like every command.
        if (!(error instanceof BimriError) || error.code === "busy") throw error;
      }
    }
    const report = auditStore(paths);
    // A failed full audit must also stop the everyday fast path of sync and close.
    if (!readOnly && !report.passed) forgetSummary(paths);
    let indexRows: number | null = null;
    if (!readOnly && report.passed) {
      try {
        indexRows = withStore(ctx.root, (store) => rebuildIndex(store));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        stderr.push(`BIMRI WARNING: index rebuild failed (${message}); run index to retry.`);
      }
    }
    return {
      exitCode: report.passed ? 0 : 1,
      text: render(readOnly, report.passed, report.errors, report.warnings),
      stderr,
      data: {
        passed: report.passed,
        read_only: readOnly,
        errors: report.errors,
        warnings: report.warnings,
        index_rows: indexRows,
      },
    };
  },
};
