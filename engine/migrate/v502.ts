/**
 * v5.0.2 -> v5.1.0 lossless authority activation (protocol 13 and 14.5): the
 * installer's code-only update route (`install --quiescent`). `migrate` takes
 * the state upgrade of v50.ts instead, as the reference's own migrate does.
 *
 * Only `state.json` changes: every other path under `.bimri/` and root
 * `bimri.md` keep their exact bytes. The order of durable steps:
 *
 *   1. validate core authority (state fields, accepted head, head grammar);
 *   2. inventory every protected path (type, hash, symlink target);
 *   3. create `.bimri-update-backups/.preparing-<timestamp>/` with the exact
 *      old state (`state-v5.0.2-exact.json`) and a `prepared` receipt (the
 *      installer renames the folder once its update receipt is in it);
 *   4. write the 5.1.0 state (version + lifecycle fields) -- last authority write;
 *   5. re-inventory, require byte identity, audit read-only, mark the receipt
 *      `activated`.
 *
 * A caught failure after step 3 restores the old state. An interrupted run is
 * resumed from the prepared receipt by the next install (state still 5.0.2)
 * or `migrate` (state already 5.1.0).
 */
import { join } from "node:path";
import { BimriError } from "../errors.ts";
import { auditStore } from "../integrity/doctor.ts";
import { CONFLICT_ID, PROPOSAL_ID } from "../model/ids.ts";
import { sha256Hex } from "../model/text.ts";
import { now, utcTimestamp } from "../model/time.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import type { JsonObject, JsonValue } from "../model/json.ts";
import { faultPoint } from "../store/fault.ts";
import {
  atomicReplace,
  createExclusive,
  listNames,
  lstatOrNull,
  readBytesOrNull,
  renameOver,
  syncDir,
} from "../store/files.ts";
import { withEngineLock } from "../store/lock.ts";
import { STORE_FOLDERS, StorePaths } from "../store/paths.ts";
import { AUTHORITY_FORMAT, BIMRI_RELEASE, ENGINE_COMPAT_RELEASE } from "../versions.ts";
import {
  activatedStateObject,
  checkCoreHead,
  inventoryDifferences,
  inventoryDigest,
  type InventoryEntry,
  inventoryStore,
  parseJsonObject,
  sameBytes,
  validateActivatedState,
} from "./common.ts";
import { readRawState } from "../records/store_format.ts";
import { type MigrationReceipt, renderReceiptLines } from "./receipt.ts";

/** Root folder of activation transactions (a sibling of `.bimri/`). */
export const UPDATE_BACKUPS = ".bimri-update-backups";
/** File name of the exact old-state copy inside a transaction folder. */
export const STATE_BACKUP_NAME = "state-v5.0.2-exact.json";
/** File name of the transaction receipt inside a transaction folder. */
export const ACTIVATION_RECEIPT_NAME = "activation-receipt.json";

const SOURCE_VERSION = "5.0.2";
const ARTIFACT_VERSIONS = new Set(["5.0", "5.0.1", "5.0.2", "5.1.0"]);

/** Artifact versions a frozen record may carry and still validate under its own rules. */
export const COMPATIBLE_ARTIFACT_VERSIONS: ReadonlySet<string> = ARTIFACT_VERSIONS;

/**
 * Engine releases a preflight receipt may name, by the artifact version it
 * was written under (frozen v5.0.2 artifacts came from the public 5.0.x engines).
 */
export function acceptedReceiptReleases(artifactVersion: string): readonly string[] {
  if (artifactVersion === AUTHORITY_FORMAT) return ["5.1.0", "5.1.1", "5.1.2"];
  if (artifactVersion === "5.0.2") return ["5.0.2", "5.0.3"];
  if (artifactVersion === "5.0.1") return ["5.0.1"];
  if (artifactVersion === "5.0") return ["5.0", "5.0.0"];
  return [];
}

/** Problems of governance records that do not block activation (they need owner repair). */
export function governanceIssues(paths: StorePaths): string[] {
  const issues: string[] = [];
  const kinds: Array<[string, RegExp, string]> = [
    ["proposals", PROPOSAL_ID, "proposal_id"],
    ["decisions", PROPOSAL_ID, "proposal_id"],
    ["conflicts", CONFLICT_ID, "conflict_id"],
    ["resolutions", CONFLICT_ID, "conflict_id"],
  ];
  for (const [folder, grammar, idField] of kinds) {
    for (const name of listNames(paths.folder(folder))) {
      if (name.startsWith(".bimri-tmp-") || name.startsWith(".bimri-new-")) continue;
      const full = join(paths.folder(folder), name);
      const info = lstatOrNull(full);
      const id = name.replace(/\.json$/, "");
      if (!name.endsWith(".json") || !grammar.test(id)) {
        issues.push(`.bimri/${folder}/${name} is not a valid record name.`);
        continue;
      }
      if (!info || !info.isFile || info.isSymlink) {
        issues.push(`.bimri/${folder}/${name} is not a regular file.`);
        continue;
      }
      const record = parseJsonObject(readBytesOrNull(full));
      if (record === null) {
        issues.push(`.bimri/${folder}/${name} is not a readable JSON object.`);
        continue;
      }
      const version = record.bimri_version;
      if (typeof version !== "string" || !ARTIFACT_VERSIONS.has(version)) {
        issues.push(`.bimri/${folder}/${name} has an unknown bimri_version.`);
      }
      if (record.record_type !== "authority-quarantine" && record[idField] !== id) {
        issues.push(`.bimri/${folder}/${name} names another record.`);
      }
    }
  }
  return issues;
}

/**
 * The transaction folder name (`YYYYmmdd-HHMMSS-<8 hex>`) of the activation a
 * receipt reports, or null when the receipt is not an activation's. The
 * installer finishes its update in that same folder, as the reference's
 * single update transaction does.
 */
export function activationTransactionOf(receipt: MigrationReceipt): string | null {
  const match = ACTIVATION_RECORD.exec(receipt.migration_record ?? "");
  return match ? match[1] : null;
}

const ACTIVATION_RECORD =
  /^\.bimri-update-backups\/((?:\.preparing-)?[0-9]{8}-[0-9]{6}-[0-9a-f]{8})\/activation-receipt\.json$/;

/**
 * An activation works in `.preparing-<transaction>`, the name the reference
 * installer skips while it re-validates the update receipts: only the
 * installer, once the folder also holds the update's `install-manifest.json`,
 * gives it its final name. An activation that a crash, a failure or `migrate`
 * ended first keeps the preparing name, so it never stops the reference's
 * next update ("code-update backup is missing a safe manifest").
 */
export const PREPARING_PREFIX = ".preparing-";

/**
 * Gives an activation's folder its final name once the installer's update
 * receipt is in it, and points the activation receipt at that name; returns
 * the final name. Call under the engine lock.
 */
export function publishActivationFolder(root: string, preparing: string): string {
  const final = preparing.slice(PREPARING_PREFIX.length);
  const base = join(root, UPDATE_BACKUPS);
  renameOver(join(base, preparing), join(base, final));
  syncDir(base);
  const record = parseJsonObject(readBytesOrNull(receiptPath(root, final)));
  if (record !== null && record.transaction === preparing) {
    writeReceipt(root, {
      ...record,
      transaction: final,
      state_backup: `${UPDATE_BACKUPS}/${final}/${STATE_BACKUP_NAME}`,
    });
  }
  return final;
}

/** A v5.0.2 update transaction's activation receipt, from its folder under the update backups. */
export type ActivationReceiptFile = JsonObject & {
  status: string;
  transaction: string;
  before_state_sha256: string;
  after_state_sha256: string;
  before_tree_digest: string;
};

/**
 * `YYYYmmdd-HHMMSS-<8 hex>` in local time, the reference's transaction folder
 * naming, sorting after every name in `existing` that has the same second:
 * readers (the reference's among them) take these folders in name order as
 * the order of the updates, and two updates within one second would otherwise
 * sort by their random suffix.
 */
export function transactionName(existing: readonly string[] = []): string {
  const d = now();
  const p = (n: number) => String(n).padStart(2, "0");
  const second = `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${
    p(d.getMinutes())
  }${p(d.getSeconds())}`;
  const floor = existing
    .map((name) => name.startsWith(PREPARING_PREFIX) ? name.slice(PREPARING_PREFIX.length) : name)
    .filter((name) => /^\d{8}-\d{6}-[0-9a-f]{8}$/.test(name) && name.startsWith(`${second}-`))
    .map((name) => parseInt(name.slice(-8), 16))
    .reduce((highest, value) => Math.max(highest, value), -1);
  const [random] = crypto.getRandomValues(new Uint32Array(1));
  // Above the highest suffix of this second (uniform in what is left), or any suffix when none.
  const room = 0xffffffff - floor;
  const suffix = room <= 0 ? random : floor + 1 + (random % room);
  return `${second}-${suffix.toString(16).padStart(8, "0")}`;
}

function receiptPath(root: string, transaction: string): string {
  return join(root, UPDATE_BACKUPS, transaction, ACTIVATION_RECEIPT_NAME);
}

/** Finds the newest transaction whose receipt is still `prepared`, or null. */
export function findPreparedActivation(root: string): ActivationReceiptFile | null {
  const base = join(root, UPDATE_BACKUPS);
  const info = lstatOrNull(base);
  if (!info || !info.isDirectory || info.isSymlink) return null;
  for (const name of listNames(base).reverse()) {
    const record = parseJsonObject(readBytesOrNull(receiptPath(root, name)));
    if (record && record.status === "prepared" && record.transaction === name) {
      return record as ActivationReceiptFile;
    }
  }
  return null;
}

function writeReceipt(root: string, receipt: JsonObject): void {
  atomicReplace(receiptPath(root, String(receipt.transaction)), canonicalJson(receipt));
}

/**
 * Refuses the install write folder `name` (root-relative) when it is a
 * symbolic link or not a folder; an absent one is fine. Creating a folder or
 * file inside a linked folder follows the link, so install would write
 * outside the project. Call before the first write.
 */
export function refuseUnsafeWriteFolder(root: string, name: string): void {
  const info = lstatOrNull(join(root, name));
  if (info === null) return;
  if (info.isSymlink) {
    throw new BimriError(
      "store-unsafe",
      `target ${name} cannot be a symbolic link or reparse point: install would write through it, outside the project. Replace it with a real folder or remove it, then install again. Nothing was changed.`,
    );
  }
  if (!info.isDirectory) {
    throw new BimriError(
      "store-unsafe",
      `target ${name} is not a folder. Move it aside, then install again. Nothing was changed.`,
    );
  }
}

/**
 * The read-only audit, except that a standard folder that simply does not
 * exist yet is not damage: the activation may not create paths, and the next
 * ordinary command creates the folder.
 */
function layoutTolerantAudit(
  paths: StorePaths,
): { passed: boolean; errors: string[]; warnings: string[] } {
  const report = auditStore(paths);
  const errors = report.errors.filter((error) => {
    const match = /^\.bimri\/([a-z-]+) is missing or unsafe\.$/.exec(error);
    return !(match && STORE_FOLDERS.includes(match[1]) &&
      lstatOrNull(paths.folder(match[1])) === null);
  });
  return { passed: errors.length === 0, errors, warnings: report.warnings };
}

/**
 * Test seam for the caught-failure path: unlike `faultPoint` (which kills the
 * process), this throws, so the rollback runs. Inert unless BIMRI_FAULT names it.
 */
function injectedFailure(point: string): void {
  let configured: string | undefined;
  try {
    configured = Deno.env.get("BIMRI_FAULT");
  } catch {
    configured = undefined;
  }
  if (configured === point) throw new BimriError("io", `injected failure at ${point}.`);
}

/** What the final phase needs to know. */
type Finish = {
  paths: StorePaths;
  receipt: ActivationReceiptFile;
  before: InventoryEntry[];
  oldStateBytes: Uint8Array;
  recoveryIssues: string[];
};

function finishActivation(f: Finish): MigrationReceipt {
  const { paths, receipt } = f;
  const after = inventoryStore(paths);
  const changed = inventoryDifferences(f.before, after);
  if (changed.length > 0) {
    throw new BimriError(
      "io",
      `protected paths changed during the activation: ${changed.join(", ")}.`,
    );
  }
  const audit = layoutTolerantAudit(paths);
  const recoveryRequired = f.recoveryIssues.length > 0 || !audit.passed;
  const mode = recoveryRequired ? "installed-recovery-required" : "lossless-authority-activation";
  const transactionDir = `${UPDATE_BACKUPS}/${receipt.transaction}`;
  const terminal: JsonObject = {
    ...receipt,
    status: "activated",
    mode,
    completed_at: utcTimestamp(),
    after_tree_digest: inventoryDigest(after),
    after_bimri_md_sha256: receipt.before_bimri_md_sha256 ?? null,
    accepted_head_revision_after: receipt.accepted_head_revision_before ?? null,
    accepted_head_hash_after: receipt.accepted_head_hash_before ?? null,
    preservation: "passed",
    activation_preservation: "immutable-evidence-unchanged",
    read_only_audit: audit.passed ? "passed" : "recovery-required",
    read_only_audit_errors: audit.errors,
    recovery_issues: f.recoveryIssues,
  };
  writeReceipt(paths.root, terminal);
  const warnings = recoveryRequired
    ? [
      "AUTHORITY RECOVERY NEEDED: the state was activated, but governance records or the view need owner repair (run doctor; quarantine-authority/restore-authority with approval).",
      ...f.recoveryIssues,
      ...audit.warnings,
    ]
    : audit.warnings;
  const base = {
    mode: mode as MigrationReceipt["mode"],
    detected_format: "5.0.2" as const,
    detected_version: SOURCE_VERSION,
    source_file: ".bimri/state.json",
    imported: { tier1: 0, tier2: 0, tier3: 0 },
    converted_patterns: 0,
    inherited_overflow: [],
    backup: `${transactionDir}/${STATE_BACKUP_NAME}`,
    migration_record: `${transactionDir}/${ACTIVATION_RECEIPT_NAME}`,
    metadata_revision: null,
    warnings,
    validation: audit.passed ? "PASSED" as const : "FAILED" as const,
    validation_errors: audit.errors,
  };
  return {
    ...base,
    lines: renderReceiptLines(base, [
      `Authority store activated from v${SOURCE_VERSION} to v${AUTHORITY_FORMAT}; the state version was committed last.`,
      `Accepted head unchanged: V${
        String(receipt.accepted_head_revision_before).padStart(6, "0")
      } ${receipt.accepted_head_hash_before}.`,
      `Memory preservation: PASSED (bimri.md and immutable evidence/history bytes unchanged across ${f.before.length} protected paths; exact prior state backed up at ${transactionDir}/${STATE_BACKUP_NAME}).`,
      `Activation receipt: ${transactionDir}/${ACTIVATION_RECEIPT_NAME}.`,
    ]),
  };
}

function rollBack(
  paths: StorePaths,
  receipt: JsonObject,
  oldStateBytes: Uint8Array,
  error: unknown,
) {
  if (!sameBytes(readBytesOrNull(paths.state), oldStateBytes)) {
    atomicReplace(paths.state, oldStateBytes);
  }
  try {
    writeReceipt(paths.root, {
      ...receipt,
      status: "rolled-back",
      rolled_back_at: utcTimestamp(),
      error: (error as Error).message ?? String(error),
    });
  } catch { /* the old state is back; the receipt stays prepared and resumable */ }
}

/**
 * The root-relative `.bimri/backups/state-v5.0.2-<sha>.json` the state upgrade
 * (`migrate`) leaves for the old state with this hash, or null when there is
 * no such regular file holding exactly those bytes.
 */
function upgradeRouteBackup(paths: StorePaths, oldStateSha: string): string | null {
  const name = `state-v${SOURCE_VERSION}-${oldStateSha}.json`;
  const path = join(paths.folder("backups"), name);
  const info = lstatOrNull(path);
  if (!info || !info.isFile || info.isSymlink) return null;
  const bytes = readBytesOrNull(path);
  return bytes !== null && sha256Hex(bytes) === oldStateSha ? `.bimri/backups/${name}` : null;
}

/** Finishes an interrupted activation whose state was already advanced (called on a 5.1.0 store). */
export function resumeAdvancedActivation(root: string): MigrationReceipt | null {
  const prepared = findPreparedActivation(root);
  if (prepared === null) return null;
  const paths = new StorePaths(root);
  return withEngineLock(paths, () => {
    const receipt = findPreparedActivation(root);
    if (receipt === null) return null;
    const stateBytes = readBytesOrNull(paths.state);
    if (stateBytes === null || sha256Hex(stateBytes) !== receipt.after_state_sha256) {
      // The activation's state write landed, and later commands have since
      // changed state: the preservation proof can no longer be taken. Record
      // that honestly instead of blocking the store forever.
      writeReceipt(root, {
        ...receipt,
        status: "superseded",
        superseded_at: utcTimestamp(),
        note:
          "state.json changed after the interrupted activation; preservation was not re-verified.",
      });
      return null;
    }
    const upgradeBackup = upgradeRouteBackup(paths, receipt.before_state_sha256);
    if (upgradeBackup !== null) {
      // `migrate` upgraded the same old state itself (the state upgrade
      // writes the very bytes this activation would have), adding its backup
      // and refreshing derived files. The activation's zero-write proof can
      // no longer be taken and there is nothing left for it to do: retire it
      // instead of failing every later migrate.
      writeReceipt(root, {
        ...receipt,
        status: "superseded",
        superseded_at: utcTimestamp(),
        note:
          `migrate upgraded the v${SOURCE_VERSION} state itself; its exact copy is ${upgradeBackup}.`,
      });
      return null;
    }
    const before = receipt.protected_manifest_before as unknown as InventoryEntry[];
    if (inventoryDigest(before) !== receipt.before_tree_digest) {
      throw new BimriError(
        "store-unsafe",
        `the prepared activation receipt in ${UPDATE_BACKUPS}/${receipt.transaction} is damaged; nothing was changed.`,
      );
    }
    const backup = readBytesOrNull(
      join(root, UPDATE_BACKUPS, receipt.transaction, STATE_BACKUP_NAME),
    );
    if (backup === null || sha256Hex(backup) !== receipt.before_state_sha256) {
      throw new BimriError(
        "store-unsafe",
        `the old-state backup of ${UPDATE_BACKUPS}/${receipt.transaction} is missing or altered; nothing was changed.`,
      );
    }
    return finishActivation({
      paths,
      receipt,
      before,
      oldStateBytes: backup,
      recoveryIssues: (receipt.recovery_issues as string[] | undefined) ?? [],
    });
  });
}

/**
 * Activates a v5.0.2 store to the 5.1.0 authority format. Requires the
 * caller's quiescence attestation; refuses damaged core authority with
 * nothing written.
 */
export function activateV502(root: string, options: { quiescent: boolean }): MigrationReceipt {
  if (!options.quiescent) {
    throw new BimriError(
      "refused",
      "this store uses memory format v5.0.2. Stop every agent and BIMRI process using the folder, then rerun with --quiescent to activate v5.1.0 (only state.json changes; the old state is backed up first). Nothing was changed.",
    );
  }
  const paths = new StorePaths(root);
  const dirInfo = lstatOrNull(paths.dir);
  if (!dirInfo || dirInfo.isSymlink || !dirInfo.isDirectory) {
    throw new BimriError("store-unsafe", ".bimri is not a regular folder; nothing was changed.");
  }
  refuseUnsafeWriteFolder(root, UPDATE_BACKUPS);
  return withEngineLock(paths, () => {
    const stateInfo = lstatOrNull(paths.state);
    if (!stateInfo || stateInfo.isSymlink || !stateInfo.isFile) {
      throw new BimriError(
        "store-unsafe",
        "state.json is not a regular file; nothing was changed.",
      );
    }
    const oldStateBytes = readBytesOrNull(paths.state) as Uint8Array;
    const raw = readRawState(paths);
    if (raw.bimri_version !== SOURCE_VERSION) {
      throw new BimriError(
        "store-unsafe",
        "state.json changed before the activation took the lock; rerun migrate. Nothing was changed.",
      );
    }
    const upgraded = activatedStateObject(raw);
    const state = validateActivatedState(upgraded, SOURCE_VERSION);
    checkCoreHead(paths, state, SOURCE_VERSION);
    const recoveryIssues = governanceIssues(paths);
    const headBytes = readBytesOrNull(paths.revision(state.head_revision));
    const viewBytes = readBytesOrNull(paths.view);
    if (!sameBytes(viewBytes, headBytes)) {
      recoveryIssues.push(
        "bimri.md differs from the accepted head; it was left untouched and the next start preserves it as a manual edit.",
      );
    }
    const before = inventoryStore(paths);
    const newStateBytes = canonicalJson(upgraded);

    // Resume a prepared transaction for this exact old state, or start one.
    let receipt = findPreparedActivation(root);
    if (receipt !== null) {
      const kept = readBytesOrNull(
        join(root, UPDATE_BACKUPS, receipt.transaction, STATE_BACKUP_NAME),
      );
      const sameTree = inventoryDigest(before) === receipt.before_tree_digest;
      if (!sameBytes(kept, oldStateBytes) || !sameTree) receipt = null;
    }
    if (receipt === null) {
      const fresh = (name: string) =>
        lstatOrNull(join(root, UPDATE_BACKUPS, name)) === null &&
        lstatOrNull(join(root, UPDATE_BACKUPS, name.slice(PREPARING_PREFIX.length))) === null;
      const taken = listNames(join(root, UPDATE_BACKUPS));
      let transaction = PREPARING_PREFIX + transactionName(taken);
      while (!fresh(transaction)) transaction = PREPARING_PREFIX + transactionName(taken);
      // The root was refused above if it is a link; the transaction folder is
      // created exclusively, so an entry that appeared since is never reused.
      Deno.mkdirSync(join(root, UPDATE_BACKUPS), { recursive: true });
      const dir = join(root, UPDATE_BACKUPS, transaction);
      Deno.mkdirSync(dir);
      if (!createExclusive(join(dir, STATE_BACKUP_NAME), oldStateBytes)) {
        throw new BimriError(
          "io",
          `could not create the state backup in ${dir}; nothing was changed.`,
        );
      }
      const prepared: JsonObject = {
        receipt_schema: 1,
        transaction,
        mode: "lossless-authority-activation",
        status: "prepared",
        engine_release: ENGINE_COMPAT_RELEASE,
        bimri_release: BIMRI_RELEASE,
        source_memory_format: SOURCE_VERSION,
        target_memory_format: AUTHORITY_FORMAT,
        state_activated: true,
        created_at: utcTimestamp(),
        state_backup: `${UPDATE_BACKUPS}/${transaction}/${STATE_BACKUP_NAME}`,
        state_backup_sha256: sha256Hex(oldStateBytes),
        before_state_sha256: sha256Hex(oldStateBytes),
        after_state_sha256: sha256Hex(newStateBytes),
        accepted_head_revision_before: state.head_revision,
        accepted_head_hash_before: state.head_hash,
        before_bimri_md_sha256: viewBytes === null ? "absent" : sha256Hex(viewBytes),
        protected_path_count: before.length,
        before_tree_digest: inventoryDigest(before),
        protected_manifest_before: before as unknown as JsonValue,
        recovery_issues: recoveryIssues,
      };
      writeReceipt(root, prepared);
      receipt = prepared as ActivationReceiptFile;
    }
    faultPoint("activate-after-backup");
    try {
      if (!sameBytes(readBytesOrNull(paths.state), oldStateBytes)) {
        throw new BimriError("io", "state.json changed while the activation was preparing.");
      }
      atomicReplace(paths.state, newStateBytes);
      faultPoint("activate-after-state");
      injectedFailure("activate-error-after-state");
      return finishActivation({ paths, receipt, before, oldStateBytes, recoveryIssues });
    } catch (error) {
      rollBack(paths, receipt, oldStateBytes, error);
      if (error instanceof BimriError) {
        throw new BimriError(
          error.code,
          `the v5.0.2 activation failed and the old state was restored: ${error.message} Retry when the folder is quiescent.`,
        );
      }
      throw error;
    }
  });
}
