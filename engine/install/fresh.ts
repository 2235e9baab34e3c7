/** The fresh and legacy install route: snapshot, write, initialize or migrate, index, self-check, or roll back. */
import { join } from "node:path";
import { BimriError } from "../errors.ts";
import { migrateForInstall, type MigrationReceipt } from "../migrate/mod.ts";
import { isOwnerNotice } from "../migrate/receipt.ts";
import { transactionName } from "../migrate/v502.ts";
import { utcTimestamp } from "../model/time.ts";
import { rebuildIndex } from "../retrieval/index_tsv.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import { atomicReplace, listNames } from "../store/files.ts";
import { StorePaths } from "../store/paths.ts";
import { openExisting, withStore } from "../store/store.ts";
import { writeGitattributes } from "./gitattributes.ts";
import type { RuntimePrefix } from "./runtime.ts";
import {
  INSTALL_BACKUPS,
  packageFilesFor,
  rel,
  validateWriteTargets,
  writeLocalBindings,
  writePackageAndAdapters,
} from "./project_files.ts";
import {
  type HookSmoke,
  type InstallReport,
  installReport,
  UPGRADED_V5_FORMATS,
} from "./report.ts";
import {
  doctorThroughPrefix,
  forcedSelfCheckFailure,
  hookNoopCheck,
  hookSmokeTest,
  selfCheckOrRecovery,
} from "./self_check.ts";
import { rollbackInstall, snapshotTarget } from "./snapshot.ts";

/** The migration receipt's lines as install reports them (its own headline instead of migrate's; owner notices kept). */
export function receiptMemoryLines(receipt: MigrationReceipt): string[] {
  // The migrate headline names the command `migrate`; the installer prints its own.
  // Owner notices (migrate prints them on stderr) stay in the install's report.
  return [
    ...receipt.lines.filter((line) => !line.startsWith("BIMRI: migration/initialization")),
    ...receipt.warnings.filter(isOwnerNotice).map((notice) => `Repair warning: ${notice}`),
  ];
}

/** The fresh route: fresh folders and v1-v4 memory (and v5.0/v5.0.1 stores, upgraded first). */
export async function freshInstall(
  target: string,
  format: string,
  prefix: RuntimePrefix,
  quiescent: boolean,
): Promise<InstallReport> {
  validateWriteTargets(target);
  const stamp = transactionName(listNames(join(target, INSTALL_BACKUPS)));
  const snapshot = snapshotTarget(target, stamp);
  const backupRel = rel(target, snapshot.backupDir);
  const newStore = format === "empty" || format === "v5-view";
  // A v5.0 or v5.0.1 store is upgraded on this route, as the reference does.
  // Its sound core (state and accepted head) with damaged governance records
  // does not roll back: the install completes as recovery-required, so the
  // quarantine and restore tools it installs are there for the owner.
  const upgradesV5 = UPGRADED_V5_FORMATS.includes(format);
  let receipt: MigrationReceipt;
  let smoke: HookSmoke;
  let audit: { passed: boolean; errors: string[]; warnings: string[] };
  const portable = packageFilesFor(target);
  let ownerFiles: string[] = [];
  try {
    ownerFiles = writePackageAndAdapters(target, (name) => `${backupRel}/${name}`);
    receipt = migrateForInstall(target, { quiescent });
    if (receipt.validation !== "PASSED" && !upgradesV5) {
      throw new Error(`memory validation failed: ${receipt.validation_errors.join("; ")}`);
    }
    // Unreadable state or a broken accepted head stays rollback-worthy.
    if (upgradesV5) openExisting(new StorePaths(target));
    try {
      withStore(target, (store) => rebuildIndex(store));
    } catch (error) {
      // The index is a derived export; damaged authority pauses its rebuild.
      if (
        !(upgradesV5 && error instanceof BimriError && error.code === "authority-recovery-needed")
      ) {
        throw error;
      }
    }
    const hooks = writeLocalBindings(target, prefix);
    forcedSelfCheckFailure();
    smoke = newStore ? await hookSmokeTest(target, hooks) : await hookNoopCheck(target, hooks);
    audit = upgradesV5
      ? await selfCheckOrRecovery(target, prefix)
      : await doctorThroughPrefix(target, prefix);
    atomicReplace(
      join(snapshot.backupDir, "install-manifest.json"),
      canonicalJson({
        ...snapshot.manifest,
        status: audit.passed ? "installed" : "installed-recovery-required",
        completed_at: utcTimestamp(),
      }),
    );
  } catch (error) {
    const cause = error instanceof Error ? error.message : String(error);
    const rollbackErrors = rollbackInstall(target, snapshot);
    if (rollbackErrors.length > 0) {
      throw new BimriError(
        "io",
        `installation failed and rollback was incomplete. Backups: ${backupRel}. Cause: ${cause}. Rollback: ${
          rollbackErrors.join("; ")
        }`,
      );
    }
    throw new BimriError(
      "refused",
      `installation self-check failed; target files were rolled back. Backups: ${backupRel}. Cause: ${cause}`,
    );
  }
  // After success: the memory's .gitattributes block (the owner's previous file kept in the backups).
  writeGitattributes(target, snapshot.backupDir);
  return installReport({
    route: newStore ? "fresh" : "migrated",
    target,
    prefix,
    format,
    memory: [...receiptMemoryLines(receipt), ...ownerFiles],
    portable,
    smoke,
    audit,
    backupRel,
  });
}
