/** The migration receipt: what a migration did, printed by `migrate` and returned to the installer. */
import type { StoreFormat } from "./detect.ts";
import { AUTHORITY_FORMAT, ENGINE_COMPAT_RELEASE } from "../versions.ts";

/** How a store reached (or stayed at) the 5.1.0 authority format. */
export type MigrationMode =
  | "initialized"
  | "verified"
  | "lossless-authority-activation"
  | "installed-recovery-required"
  | "state-upgrade"
  | "legacy-to-v5"
  | "v4-to-v5";

/** Everything a caller needs to report a migration (stable snake_case for `--json`). */
export type MigrationReceipt = {
  /** What happened. */
  mode: MigrationMode;
  /** The generation found before the migration. */
  detected_format: StoreFormat;
  /** Version label of the source (`v3`, `v4`, `5.0.2`, ...). */
  detected_version: string;
  /** Root-relative source file, or null. */
  source_file: string | null;
  /** Imported Tier 1 / Tier 2 / Tier 3 entries (zero when nothing was converted). */
  imported: { tier1: number; tier2: number; tier3: number };
  /** v1-v3 patterns converted into Tier 2 watch claims. */
  converted_patterns: number;
  /** Keys whose inherited text exceeds the 500-character ceiling (kept whole). */
  inherited_overflow: string[];
  /** Root-relative backup location (folder or file), or null. */
  backup: string | null;
  /** Root-relative migration record, or null. */
  migration_record: string | null;
  /** A metadata-only revision made by a v5.0/v5.0.1 upgrade, or null. */
  metadata_revision: string | null;
  /** "PASSED" or "FAILED". */
  validation: "PASSED" | "FAILED";
  /** Validation errors (empty when PASSED). */
  validation_errors: string[];
  /** Non-fatal findings (inherited overflow, damaged governance records, ...). */
  warnings: string[];
  /** The human-readable receipt, one line per element. */
  lines: string[];
};

/** The first line of every successful migrate receipt. */
export function receiptHeadline(): string {
  return `BIMRI: migration/initialization complete at memory format v${AUTHORITY_FORMAT} (engine v${ENGINE_COMPAT_RELEASE}).`;
}

/** Renders the receipt's `lines` from its fields plus a mode-specific memory line. */
export function renderReceiptLines(
  receipt: Omit<MigrationReceipt, "lines">,
  memoryLine: string,
): string[] {
  const lines = [receiptHeadline(), memoryLine];
  if (receipt.mode === "legacy-to-v5" || receipt.mode === "v4-to-v5") {
    lines.push(
      `Imported: Tier 1 ${receipt.imported.tier1} | Tier 2 ${receipt.imported.tier2} | Tier 3 ${receipt.imported.tier3} | converted patterns ${receipt.converted_patterns}.`,
    );
  }
  if (receipt.inherited_overflow.length > 0) {
    lines.push(
      `Inherited overflow (kept whole, reduce later): ${receipt.inherited_overflow.join(", ")}.`,
    );
  }
  if (receipt.backup !== null) lines.push(`Backup: ${receipt.backup}`);
  if (receipt.migration_record !== null) lines.push(`Migration record: ${receipt.migration_record}`);
  if (receipt.metadata_revision !== null) {
    lines.push(`Metadata-only revision: ${receipt.metadata_revision}`);
  }
  for (const warning of receipt.warnings) lines.push(`  - ${warning}`);
  lines.push(`Validation: ${receipt.validation}.`);
  for (const error of receipt.validation_errors) lines.push(`  - ${error}`);
  return lines;
}
