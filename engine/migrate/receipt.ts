/** The migration receipt: what a migration did, printed by `migrate` and returned to the installer. */
import type { StoreFormat } from "../records/store_format.ts";
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

/** A limit profile as the reference prints it: `T1/T2/T3 20/40/12, entry 500 chars, 49,152 bytes`. */
export function profileText(limits: Readonly<Record<string, number>>): string {
  const grouped = String(limits.hot_max_bytes).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `T1/T2/T3 ${limits.tier1_max}/${limits.tier2_max}/${limits.tier3_max}, entry ${limits.entry_max_chars} chars, ${grouped} bytes`;
}

/** The line naming a metadata-only revision (`V000003.md`), as the reference words it. */
export function metadataRevisionLine(revision: string): string {
  return `Memory metadata normalized in immutable revision ${revision}.md.`;
}

/**
 * Renders the printed receipt: the headline, the route's memory lines (in the
 * reference's wording), the validation result with any errors, then non-fatal
 * findings as `Repair warning:` lines.
 */
export function renderReceiptLines(
  receipt: Omit<MigrationReceipt, "lines">,
  memoryLines: string[],
): string[] {
  const lines = [receiptHeadline(), ...memoryLines];
  lines.push(`Validation: ${receipt.validation}.`);
  for (const error of receipt.validation_errors) lines.push(`  - ${error}`);
  for (const warning of receipt.warnings) {
    // An owner-facing notice (a preserved direct edit) goes to stderr, as every command prints it.
    if (!isOwnerNotice(warning)) lines.push(`Repair warning: ${warning}`);
  }
  return lines;
}

/** True for a `BIMRI NOTICE:` among a receipt's warnings (printed on stderr, not as a repair warning). */
export function isOwnerNotice(warning: string): boolean {
  return warning.startsWith("BIMRI NOTICE:");
}

/** Memory lines of a v1-v4 migration (reference wording). */
export function migratedLines(
  source: string,
  sourceFile: string,
  counts: { tier1: number; tier2: number; tier3: number; patterns: number; overlength: number },
  backups: string[],
  metadataRevision: string | null,
  record: string,
): string[] {
  const total = counts.tier1 + counts.tier2 + counts.tier3;
  const lines = [
    `Memory: migrated BIMRI v${source} from ${sourceFile} to v${AUTHORITY_FORMAT}.`,
    `Imported: Tier 1 ${counts.tier1}; Tier 2 ${counts.tier2}; Tier 3 ${counts.tier3}; total ${total}; converted patterns ${counts.patterns}; inherited overlength ${counts.overlength}.`,
  ];
  if (backups.length > 0) lines.push(`Byte-exact backups: ${backups.join(", ")}.`);
  if (metadataRevision !== null) lines.push(metadataRevisionLine(metadataRevision));
  lines.push(`Migration record: ${record}.`);
  return lines;
}
