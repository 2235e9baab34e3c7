/**
 * Migration entry points: detect a store's generation and bring it to the
 * 5.1.0 authority format. `migrate` goes through `migrateStore`, the
 * installer through `migrateForInstall` (which differs only for 5.0.2); each
 * route validates everything before its first write.
 */
import { BimriError } from "../errors.ts";
import {
  detectStoreFormat,
  rejectUnclaimedLegacyRoots,
  type StoreDetection,
} from "../records/store_format.ts";
import { metadataRevisionLine, type MigrationReceipt, profileText } from "./receipt.ts";
import { normalizeCurrentHead } from "./current_head.ts";
import { stateLimits } from "./common.ts";
import { join } from "node:path";
import { lstatOrNull } from "../store/files.ts";
import { STORE_FOLDERS, StorePaths } from "../store/paths.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";
import { finishReceipt, syncViewAndIndex } from "./finish.ts";
import { activateV502, resumeAdvancedActivation } from "./v502.ts";
import { upgradeV50 } from "./v50.ts";
import { finishLegacyRetirement, migrateLegacy } from "./legacy.ts";
import { finishV4View, migrateV4 } from "./v4.ts";

export {
  detectStoreFormat,
  type StoreDetection,
  type StoreFormat,
} from "../records/store_format.ts";
export type { MigrationMode, MigrationReceipt } from "./receipt.ts";
export { finishReceipt } from "./finish.ts";
export { acceptedReceiptReleases, COMPATIBLE_ARTIFACT_VERSIONS } from "./v502.ts";

/** Options of a migration run. */
export type MigrateOptions = {
  /**
   * The caller attests that no other agent, engine or sync tool touches the
   * folder (required for the 5.0.x state activations, as in the reference).
   */
  quiescent: boolean;
};

function emptyCounts() {
  return { tier1: 0, tier2: 0, tier3: 0 };
}

/** The 5.1.0 path: verify, synchronize the view; nothing is converted. */
function verifyCurrent(
  root: string,
  detection: StoreDetection,
  earlier: string[] = [],
): MigrationReceipt {
  const initialized = detection.format === "empty" || detection.format === "v5-view";
  // A current store: its head must parse, and stale historical metadata gets
  // its metadata-only revision, before the view is synchronized.
  const metadataRevision = initialized ? null : normalizeCurrentHead(root);
  const notices = [...earlier, ...syncViewAndIndex(root)];
  const paths = new StorePaths(root);
  return finishReceipt(
    root,
    {
      mode: initialized ? "initialized" : "verified",
      detected_format: detection.format,
      detected_version: initialized ? "none" : "5.1.0",
      source_file: detection.source,
      imported: emptyCounts(),
      converted_patterns: 0,
      inherited_overflow: [],
      backup: null,
      migration_record: null,
      metadata_revision: metadataRevision,
      warnings: notices,
    },
    initialized
      ? [`Memory: initialized at v${AUTHORITY_FORMAT} (${profileText(stateLimits(paths))}).`]
      : metadataRevision !== null
      ? [
        "Memory: existing v5.1.0 verified.",
        metadataRevisionLine(metadataRevision),
      ]
      : ["Memory: existing v5.1.0 verified; no migration performed."],
  );
}

/**
 * Every migrator writes into store folders (backups, revisions, migrations,
 * ...); one that is a symbolic link would carry those writes out of the
 * project, so each must be a real folder or absent before the first write.
 */
function refuseLinkedStoreFolders(root: string): void {
  for (const name of [".bimri", ...STORE_FOLDERS.map((folder) => `.bimri/${folder}`)]) {
    const info = lstatOrNull(join(root, name));
    if (info === null || (info.isDirectory && !info.isSymlink)) continue;
    throw new BimriError(
      "store-unsafe",
      `${name} ${
        info.isSymlink ? "cannot be a symbolic link" : "is not a folder"
      }: migrate would write through it, outside the store. Replace it with a real folder, then run migrate again. Nothing was changed.`,
    );
  }
}

/**
 * Brings the store at `root` to the 5.1.0 authority format (or verifies it)
 * and returns the receipt. Refusals throw BimriError with nothing written.
 */
export function migrateStore(root: string, options: MigrateOptions): MigrationReceipt {
  refuseLinkedStoreFolders(root);
  const detection = detectStoreFormat(root);
  switch (detection.format) {
    case "empty":
    case "v5-view":
      return verifyCurrent(root, detection);
    case "5.1.0": {
      const earlier = [...finishLegacyRetirement(root), ...finishV4View(root)];
      rejectUnclaimedLegacyRoots(root);
      return resumeAdvancedActivation(root) ?? verifyCurrent(root, detection, earlier);
    }
    case "5.0":
    case "5.0.1":
    case "5.0.2":
      // As the reference's loader: every older v5 state takes the one state
      // upgrade (backup under .bimri/backups/, "upgraded" receipt, view sync).
      rejectUnclaimedLegacyRoots(root);
      return upgradeV50(root, options, detection.format);
    case "legacy":
      return migrateLegacy(root);
    case "v4":
      return migrateV4(root);
  }
  throw new BimriError("store-unsafe", "unrecognized store format; nothing was changed.");
}

/**
 * The installer's entry point: same as `migrate`, except that a 5.0.2 store
 * gets the code-only update's lossless activation (only state.json changes;
 * the transaction lives in `.bimri-update-backups/`), as the reference's
 * installer does. `quiescent` must be the user's explicit attestation.
 */
export function migrateForInstall(root: string, options: MigrateOptions): MigrationReceipt {
  refuseLinkedStoreFolders(root);
  if (detectStoreFormat(root).format === "5.0.2") {
    rejectUnclaimedLegacyRoots(root);
    return activateV502(root, options);
  }
  return migrateStore(root, options);
}
