/** Completing a migration: the read-only audit and the rendered receipt. */
import { BimriError } from "../errors.ts";
import { auditStore } from "../integrity/doctor.ts";
import { syncView } from "../memory/view_sync.ts";
import { rebuildIndex } from "../retrieval/index_tsv.ts";
import { StorePaths } from "../store/paths.ts";
import { withStore } from "../store/store.ts";
import { type MigrationReceipt, renderReceiptLines } from "./receipt.ts";

/** Finishes a receipt: runs the audit and renders the printed lines. */
export function finishReceipt(
  root: string,
  partial: Omit<MigrationReceipt, "lines" | "validation" | "validation_errors">,
  memoryLines: string[],
): MigrationReceipt {
  const report = auditStore(new StorePaths(root));
  const base = {
    ...partial,
    warnings: [...partial.warnings, ...report.warnings],
    validation: report.passed ? "PASSED" as const : "FAILED" as const,
    validation_errors: report.errors,
  };
  return { ...base, lines: renderReceiptLines(base, memoryLines) };
}

/**
 * The lifecycle repair path every completed migration ends with: open the
 * store (layout, lock), synchronize the generated view (an edited view goes
 * through manual-edit recovery) and rebuild the derived index. Returns notices.
 */
export function syncViewAndIndex(root: string): string[] {
  return withStore(root, (store) => {
    const sync = syncView(store);
    const notices = [...sync.notices, ...sync.warnings];
    try {
      rebuildIndex(store);
    } catch (error) {
      // The index is a derived export: memory is already migrated, so a
      // history file the exporter cannot read is reported, not fatal.
      if (!(error instanceof BimriError)) throw error;
      notices.push(`index.tsv was not rebuilt: ${error.message}`);
    }
    return notices;
  });
}
