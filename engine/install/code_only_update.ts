/** The existing v5 route: a code-only update that replaces program files only, with a receipt, leaving memory byte-identical. */
import { dirname, join } from "node:path";
import { BimriError } from "../errors.ts";
import { auditStore } from "../integrity/doctor.ts";
import { detectStoreFormat, migrateForInstall, type MigrationReceipt } from "../migrate/mod.ts";
import {
  activationTransactionOf,
  PREPARING_PREFIX,
  publishActivationFolder,
  STATE_BACKUP_NAME as ACTIVATION_STATE_BACKUP,
  transactionName,
  UPDATE_BACKUPS,
} from "../migrate/v502.ts";
import { finishLegacyRetirement } from "../migrate/legacy.ts";
import { finishV4View } from "../migrate/v4.ts";
import { sha256Hex } from "../model/text.ts";
import { utcTimestamp } from "../model/time.ts";
import { rebuildIndex } from "../retrieval/index_tsv.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import type { JsonObject } from "../model/json.ts";
import { atomicReplace, listNames, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { withEngineLock } from "../store/lock.ts";
import { faultPoint } from "../store/fault.ts";
import { StorePaths } from "../store/paths.ts";
import { openExisting, withStore } from "../store/store.ts";
import { AUTHORITY_FORMAT, BIMRI_RELEASE, ENGINE_COMPAT_RELEASE } from "../versions.ts";
import { writeGitattributes } from "./gitattributes.ts";
import {
  recoverEarlierUpdates,
  restoreUpdateRecords,
  type UpdateRecord,
} from "./update_receipts.ts";
import type { RuntimePrefix } from "./runtime.ts";
import {
  ADAPTER_FILES,
  DIVERTED_GUIDE,
  LOCAL_FILES,
  packageFilesFor,
  rel,
  validateWriteTargets,
  writeLocalBindings,
  writePackageAndAdapters,
} from "./project_files.ts";
import { type HookSmoke, type InstallReport, installReport } from "./report.ts";
import { forcedSelfCheckFailure, hookNoopCheck } from "./self_check.ts";
import { receiptMemoryLines } from "./fresh.ts";
import {
  manifestDifferences,
  type ProtectedManifest,
  protectedManifest,
} from "./protected_manifest.ts";

/**
 * Every program path the reference engine's code-only update backs up. Its
 * installer re-validates each `.bimri-update-backups/<stamp>/install-manifest.json`
 * and requires `records` to name exactly these paths (absent ones with
 * `existed: false`), so bimri records the same set even though it ships fewer.
 */
const UPDATE_RECEIPT_TARGETS: readonly string[] = [
  "bimri-engine.py",
  "BIMRI-PROTOCOL.md",
  "BIMRI-MEMORY.template.md",
  "BIMRI-STATE.template.json",
  "BIMRI-AGENT-BLOCK.md",
  "INSTALL.md",
  "MIGRATION.md",
  "hooks-example.json",
  "legacy/README.md",
  "legacy/v1/BIMRI-global-instructions.md",
  "legacy/v3/BIMRI-global-instructions.md",
  "legacy/v3/BIMRI-global-instructions-v3.md",
  "legacy/v3/README.md",
  "BIMRI-LICENSE",
  ...ADAPTER_FILES,
  ...LOCAL_FILES,
];

/** Program folders the reference receipt records as `directories` (name -> existed). */
const UPDATE_RECEIPT_DIRECTORIES: readonly string[] = ["legacy", "legacy/v1", "legacy/v3"];

/**
 * The refusal for an install that stopped after its upgrade committed: says
 * so first, since the cause alone may read as if nothing had changed.
 */
function stoppedAfterUpgrade(upgrade: string, error: unknown): BimriError {
  const message = (error instanceof Error ? error.message : String(error))
    // True of the step that refused, not of the install: the upgrade did change memory.
    .replace(/[;,.]?\s*nothing was changed\.?\s*$/i, "");
  const cause = /[.!?]$/.test(message) ? message : `${message}.`;
  return new BimriError(
    error instanceof BimriError ? error.code : "io",
    `${upgrade}, but the install stopped before writing its program files: ${cause} Memory stays at ${AUTHORITY_FORMAT}; fix the cause, then install again with --quiescent.`,
  );
}

/** The code-only update of an existing v5 store (`--quiescent`): program files replaced, memory byte-identical. */
export async function codeOnlyUpdate(
  target: string,
  format: string,
  prefix: RuntimePrefix,
  quiescent: boolean,
  adopted = false,
): Promise<InstallReport> {
  validateWriteTargets(target);
  // A store share pull built here has no index yet: the derived cache is
  // built before the update's "before" snapshot, so no repair warning follows.
  if (adopted) {
    withStore(target, (store) => {
      if (lstatOrNull(store.paths.index) === null) rebuildIndex(store);
    });
  }
  // Earlier receipts first, as the reference checks them: a cut-short update
  // gets its program files back before this one backs them up.
  const paths = new StorePaths(target);
  const memory: string[] = withEngineLock(paths, () => recoverEarlierUpdates(target));
  if (format === AUTHORITY_FORMAT) {
    // An install (or migrate) killed after its migration committed the state
    // but before the old root files were retired: finish that first, as
    // migrate does, or doctor keeps failing on "unclaimed legacy root files".
    memory.push(
      ...[...finishLegacyRetirement(target), ...finishV4View(target)].map((n) =>
        `Repair warning: ${n}`
      ),
    );
  }
  // A v5.0.2 store is activated first, in its own transaction folder; the
  // update then finishes in that folder, so the project holds one receipt per
  // update, as the reference writes it (its installer refuses a transaction
  // folder without an install-manifest.json). The receipt's "before" is the
  // store as it was before the activation.
  let activation: { transaction: string; before: ProtectedManifest } | null = null;
  // Set once this install has committed the store's upgrade: from then on a
  // failure must say that memory did change, never "nothing was changed".
  let upgraded: string | null = null;
  if (format !== AUTHORITY_FORMAT) {
    // A 5.0.2 store reaches 5.1.0 through the migrator first (5.0 and 5.0.1
    // take the fresh route, see UPGRADED_V5_FORMATS).
    const beforeActivation = format === "5.0.2" ? protectedManifest(target) : null;
    let receipt: MigrationReceipt;
    try {
      receipt = migrateForInstall(target, { quiescent });
    } catch (error) {
      // The migrator refuses before its commit; a failure after it (in the
      // view sync, say) leaves a 5.1.0 state that must be named as such.
      let committed = false;
      try {
        committed = detectStoreFormat(target).format === AUTHORITY_FORMAT;
      } catch { /* not provably upgraded: the migrator's own error stands */ }
      if (!committed) throw error;
      throw stoppedAfterUpgrade(`the v${format} store was brought to ${AUTHORITY_FORMAT}`, error);
    }
    upgraded =
      `the v${format} store was brought to ${AUTHORITY_FORMAT}, its exact prior state kept at ${
        receipt.backup ?? "its backup"
      }`;
    // A receipt means the upgrade committed. A FAILED validation is the audit
    // finding damage the upgrade carried over untouched (a damaged conflict
    // record, say): the update goes on exactly as on a 5.1.0 store with that
    // damage, and its own read-only audit reports recovery required. Stopping
    // here would leave an upgraded store without program files or runtime
    // binding, under a message saying it could not be upgraded.
    memory.push(...receiptMemoryLines(receipt));
    const transaction = activationTransactionOf(receipt);
    if (transaction !== null && beforeActivation !== null) {
      activation = { transaction, before: beforeActivation };
    }
  }
  // recoverEarlierUpdates has refused a backup root that is a link or no folder.
  const backupRoot = join(target, UPDATE_BACKUPS);
  // An activation's folder keeps its preparing name until this update's
  // receipt is in it (see PREPARING_PREFIX).
  let backupDir = join(
    backupRoot,
    activation?.transaction ?? transactionName(listNames(backupRoot)),
  );
  let backupRel = rel(target, backupDir);
  const stateBackup = `state-v${AUTHORITY_FORMAT}-exact.json`;
  const records: Record<string, UpdateRecord> = {};
  let manifest: JsonObject = {};
  let before: ProtectedManifest | null = null;
  let hooks = "";
  let ownerFiles: string[] = [];
  const portable = packageFilesFor(target);
  // BIMRI-INSTALL.md is outside the reference's receipt targets: a rollback removes a new one.
  const newGuide = portable.includes(DIVERTED_GUIDE) &&
    lstatOrNull(join(target, DIVERTED_GUIDE)) === null;
  let audit = { passed: false, errors: [] as string[], warnings: [] as string[] };

  const prepareAndWrite = () => {
    // Unreadable state or a broken accepted head stops the update before any write;
    // damaged governance records do not (the update then reports recovery required).
    openExisting(paths);
    before = protectedManifest(target);
    const pre = auditStore(paths);
    if (activation === null) {
      // A new stamp folder, created exclusively (its root was refused if a link).
      Deno.mkdirSync(backupRoot, { recursive: true });
      Deno.mkdirSync(backupDir);
    }
    for (const name of UPDATE_RECEIPT_TARGETS) {
      const bytes = readBytesOrNull(join(target, name));
      if (bytes === null) {
        records[name] = { existed: false, backup: null, sha256: null };
        continue;
      }
      const backup = `files/${name}`;
      Deno.mkdirSync(dirname(join(backupDir, backup)), { recursive: true });
      atomicReplace(join(backupDir, backup), bytes);
      records[name] = { existed: true, backup, sha256: sha256Hex(bytes) };
    }
    const stateBytes = Deno.readFileSync(paths.state);
    atomicReplace(join(backupDir, stateBackup), stateBytes);
    // What the receipt calls "before": the store before this install touched it.
    const snapshot: ProtectedManifest = activation?.before ?? before;
    const exactOldState = activation
      ? readBytesOrNull(join(backupDir, ACTIVATION_STATE_BACKUP)) ?? new Uint8Array()
      : stateBytes;
    manifest = {
      bimri_release: BIMRI_RELEASE,
      compatible_engine: ENGINE_COMPAT_RELEASE,
      // The reference installer identifies a receipt by engine_release + memory_format.
      engine_release: ENGINE_COMPAT_RELEASE,
      memory_format: AUTHORITY_FORMAT,
      mode: activation ? "lossless-authority-activation" : "code-only-update",
      source_memory_format: activation ? "5.0.2" : AUTHORITY_FORMAT,
      created_at: utcTimestamp(),
      target,
      status: "prepared",
      records: records as unknown as JsonObject,
      directories: Object.fromEntries(
        UPDATE_RECEIPT_DIRECTORIES.map((name) => [
          name,
          lstatOrNull(join(target, name))?.isDirectory === true,
        ]),
      ),
      protected_manifest_before: {
        ...snapshot,
        protected_path_count: Object.keys(snapshot.records).length,
      } as unknown as JsonObject,
      protected_path_count: Object.keys(snapshot.records).length,
      before_tree_digest: snapshot.tree_digest,
      before_bimri_md_sha256: snapshot.bimri_md_sha256,
      before_state_sha256: snapshot.state_sha256,
      accepted_head_revision_before: snapshot.accepted_head_revision,
      accepted_head_hash_before: snapshot.accepted_head_hash,
      pre_update_audit_errors: pre.errors,
      state_backup: activation ? ACTIVATION_STATE_BACKUP : stateBackup,
      state_backup_sha256: sha256Hex(exactOldState),
    };
    atomicReplace(join(backupDir, "install-manifest.json"), canonicalJson(manifest));
    if (activation?.transaction.startsWith(PREPARING_PREFIX)) {
      const finalName = publishActivationFolder(target, activation.transaction);
      backupDir = join(backupRoot, finalName);
      backupRel = rel(target, backupDir);
      // The activation's receipt lines named the folder by its preparing name.
      const [from, to] = [activation.transaction, finalName].map((n) => `${UPDATE_BACKUPS}/${n}/`);
      for (let i = 0; i < memory.length; i++) memory[i] = memory[i].replaceAll(from, to);
    }
    ownerFiles = writePackageAndAdapters(
      target,
      (name) =>
        UPDATE_RECEIPT_TARGETS.includes(name)
          ? `${backupRel}/files/${name}`
          : `${backupRel} (not backed up: ${name} is new)`,
    );
    hooks = writeLocalBindings(target, prefix);
    faultPoint("update-after-program-files");
    const differences = manifestDifferences(before, protectedManifest(target));
    if (differences.length > 0) {
      throw new Error(`memory preservation check failed: ${differences.join("; ")}`);
    }
    const post = auditStore(paths);
    audit = { passed: post.passed, errors: post.errors, warnings: post.warnings };
  };

  const fail = (error: unknown): never => {
    const cause = error instanceof Error ? error.message : String(error);
    const memoryNote = upgraded === null
      ? "memory was not changed"
      : `memory was not changed by the update itself (before it, ${upgraded})`;
    const errors = withEngineLock(paths, () => {
      const restoreErrors = restoreUpdateRecords(target, backupDir, records);
      if (newGuide) {
        try {
          Deno.removeSync(join(target, DIVERTED_GUIDE));
        } catch (error) {
          if (!(error instanceof Deno.errors.NotFound)) restoreErrors.push(String(error));
        }
      }
      if (before) restoreErrors.push(...manifestDifferences(before, protectedManifest(target)));
      try {
        atomicReplace(
          join(backupDir, "install-manifest.json"),
          canonicalJson({
            ...manifest,
            status: restoreErrors.length ? "rollback-incomplete" : "rolled-back",
            rolled_back_at: utcTimestamp(),
            rollback_errors: restoreErrors,
            preservation: restoreErrors.length ? "failed" : "passed",
            protected_write_attempts: 0,
          }),
        );
      } catch { /* the error below still names the backup folder */ }
      return restoreErrors;
    });
    if (errors.length > 0) {
      throw new BimriError(
        "io",
        `code-only update failed and rollback was incomplete. Backups: ${backupRel}. Cause: ${cause}. Rollback: ${
          errors.join("; ")
        }`,
      );
    }
    throw new BimriError(
      "refused",
      `code-only update failed; the program files were rolled back and ${memoryNote}. Backups: ${backupRel}. Cause: ${cause}`,
    );
  };

  try {
    withEngineLock(paths, prepareAndWrite);
  } catch (error) {
    if (Object.keys(manifest).length === 0) {
      // The update wrote nothing yet; an upgrade before it still did.
      throw upgraded === null ? error : stoppedAfterUpgrade(upgraded, error);
    }
    fail(error);
  }
  let smoke: HookSmoke;
  try {
    forcedSelfCheckFailure();
    // Outside the lock: the hook is a separate bimri process that takes it.
    smoke = await hookNoopCheck(target, hooks);
    const differences = manifestDifferences(before!, protectedManifest(target));
    if (differences.length > 0) {
      throw new Error(`the hook check changed memory: ${differences.join("; ")}`);
    }
  } catch (error) {
    return fail(error);
  }
  const after = protectedManifest(target);
  manifest = {
    ...manifest,
    status: audit.passed ? "installed" : "installed-recovery-required",
    completed_at: utcTimestamp(),
    after_tree_digest: after.tree_digest,
    after_bimri_md_sha256: after.bimri_md_sha256,
    after_state_sha256: after.state_sha256,
    accepted_head_revision_after: after.accepted_head_revision,
    accepted_head_hash_after: after.accepted_head_hash,
    read_only_audit: audit.passed ? "passed" : "recovery-required",
    read_only_audit_errors: audit.errors,
    preservation: "passed",
    // The activation changed only state.json; every other record kept its bytes.
    activation_preservation: "immutable-evidence-unchanged",
    state_activated: activation !== null,
    protected_write_attempts: 0,
  };
  atomicReplace(join(backupDir, "install-manifest.json"), canonicalJson(manifest));
  // After success: the memory's .gitattributes block (the owner's previous file kept in the receipt folder).
  writeGitattributes(target, backupDir);
  const revision = after.accepted_head_revision ?? 0;
  memory.push(
    `Existing authority store v${AUTHORITY_FORMAT} verified.`,
    `Accepted head unchanged: V${String(revision).padStart(6, "0")} ${after.accepted_head_hash}.`,
    `Memory preservation: PASSED (bimri.md and every record byte-identical; exact prior state backed up at ${backupRel}/${stateBackup}).`,
    adopted && !quiescent
      ? "Store adopted without --quiescent: share pull built it in this clone and it was never installed, so no older engine can be running here."
      : "External quiescence was attested by the caller (--quiescent); the lock cannot stop a process that already loaded an older engine.",
    ...ownerFiles,
  );
  return installReport({
    route: "code-only-update",
    target,
    prefix,
    format,
    memory,
    portable,
    smoke,
    audit,
    backupRel,
  });
}
