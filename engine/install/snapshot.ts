/** The fresh route's safety net: back up every path it may replace under a new stamp, and roll back to that backup. */
import { dirname, join } from "node:path";
import { BimriError } from "../errors.ts";
import { sha256Hex } from "../model/text.ts";
import { utcTimestamp } from "../model/time.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import type { JsonObject } from "../model/json.ts";
import { atomicReplace, lstatOrNull } from "../store/files.ts";
import { AUTHORITY_FORMAT, BIMRI_RELEASE, ENGINE_COMPAT_RELEASE } from "../versions.ts";
import { removeIfPresent } from "./update_receipts.ts";
import {
  ADAPTER_FILES,
  DIVERTED_GUIDE,
  INSTALL_BACKUPS,
  LOCAL_FILES,
  PACKAGE_FILES,
  rel,
} from "./project_files.ts";

/** Root files of older memory generations that a migration may touch. */
const LEGACY_ROOT_FILES = ["bimri.md", "BIMRI.md", "BIMRI-backup.md", "bimri-backup.md"];

type SnapshotRecord = { existed: boolean; backup: string | null; sha256: string | null };

type InstallSnapshot = {
  backupDir: string;
  preexistingFiles: Set<string>;
  preexistingDirs: Set<string>;
  records: Record<string, SnapshotRecord>;
  manifest: JsonObject;
};

/** Every file and folder under `.bimri/` except install backups (root-relative). */
function storeEntries(target: string): { files: Set<string>; dirs: Set<string> } {
  const files = new Set<string>();
  const dirs = new Set<string>();
  const walk = (dir: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return;
      throw error;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      const name = rel(target, path);
      if (name === INSTALL_BACKUPS) continue;
      if (entry.isDirectory && !entry.isSymlink) {
        dirs.add(name);
        walk(path);
      } else files.add(name);
    }
  };
  walk(join(target, ".bimri"));
  return { files, dirs };
}

/**
 * Backs up every path the fresh route may replace into a new
 * `.bimri/install-backups/<stamp>/`. Every managed path is checked before the
 * first write, so a refusal leaves the project as it was.
 */
export function snapshotTarget(target: string, stamp: string): InstallSnapshot {
  const { files, dirs } = storeEntries(target);
  const managed = [
    ...new Set([
      ...PACKAGE_FILES,
      DIVERTED_GUIDE,
      ...ADAPTER_FILES,
      ...LEGACY_ROOT_FILES,
      ...LOCAL_FILES,
      ".bimri/state.json",
      ".bimri/index.tsv",
      ...[...files].filter((f) => /^\.bimri\/conflicts\/[^/]+\.json$/.test(f)).sort(),
    ]),
  ];
  for (const name of managed) {
    const info = lstatOrNull(join(target, name));
    if (info?.isSymlink || (info && !info.isFile)) {
      throw new BimriError(
        "store-unsafe",
        `refusing to install over ${name}: it is a symbolic link or not a regular file. Replace it with a regular file or move it aside, then install again. Nothing was changed.`,
      );
    }
  }
  // validateWriteTargets refused linked folders; the stamp folder itself is
  // created exclusively, so even an entry that appeared since is never reused.
  Deno.mkdirSync(join(target, INSTALL_BACKUPS), { recursive: true });
  const backupDir = join(target, INSTALL_BACKUPS, stamp);
  Deno.mkdirSync(backupDir);
  const records: Record<string, SnapshotRecord> = {};
  for (const name of managed) {
    const source = join(target, name);
    const info = lstatOrNull(source);
    if (!info) {
      records[name] = { existed: false, backup: null, sha256: null };
      continue;
    }
    const bytes = Deno.readFileSync(source);
    const backup = name.includes("/") ? `runtime/${name}` : name;
    Deno.mkdirSync(dirname(join(backupDir, backup)), { recursive: true });
    atomicReplace(join(backupDir, backup), bytes);
    records[name] = { existed: true, backup, sha256: sha256Hex(bytes) };
  }
  const manifest: JsonObject = {
    bimri_release: BIMRI_RELEASE,
    compatible_engine: ENGINE_COMPAT_RELEASE,
    memory_format: AUTHORITY_FORMAT,
    created_at: utcTimestamp(),
    target,
    status: "prepared",
    records: records as unknown as JsonObject,
    preexisting_bimri_files: [...files].sort(),
  };
  atomicReplace(join(backupDir, "install-manifest.json"), canonicalJson(manifest));
  return { backupDir, preexistingFiles: files, preexistingDirs: dirs, records, manifest };
}

/** Restores every touched path of a fresh install; returns what could not be restored. */
export function rollbackInstall(target: string, snapshot: InstallSnapshot): string[] {
  const errors: string[] = [];
  const { files, dirs } = storeEntries(target);
  for (const name of [...files].sort()) {
    if (snapshot.preexistingFiles.has(name) || name === ".bimri/engine.lock") continue;
    if (name in snapshot.records) continue;
    try {
      removeIfPresent(join(target, name));
    } catch (error) {
      errors.push(`could not remove ${name}: ${(error as Error).message}`);
    }
  }
  for (const [name, record] of Object.entries(snapshot.records)) {
    const path = join(target, name);
    try {
      if (record.existed && record.backup) {
        atomicReplace(path, Deno.readFileSync(join(snapshot.backupDir, record.backup)));
      } else removeIfPresent(path);
    } catch (error) {
      errors.push(`could not restore ${name}: ${(error as Error).message}`);
    }
  }
  // Folders the install created (deepest first), except those holding the backup.
  for (const name of [...dirs].sort().reverse()) {
    if (snapshot.preexistingDirs.has(name)) continue;
    try {
      Deno.removeSync(join(target, name));
    } catch (error) {
      errors.push(`could not remove created folder ${name}: ${(error as Error).message}`);
    }
  }
  // The engine lock is recreated harmlessly by any command; drop it when the store is gone.
  if (
    !snapshot.preexistingFiles.has(".bimri/engine.lock") &&
    lstatOrNull(join(target, ".bimri", "state.json")) === null
  ) {
    try {
      removeIfPresent(join(target, ".bimri", "engine.lock"));
    } catch { /* a held lock file is harmless */ }
  }
  const manifest = {
    ...snapshot.manifest,
    status: errors.length ? "rollback-incomplete" : "rolled-back",
    rolled_back_at: utcTimestamp(),
    rollback_errors: errors,
  };
  try {
    atomicReplace(join(snapshot.backupDir, "install-manifest.json"), canonicalJson(manifest));
  } catch (error) {
    errors.push(`could not update the install manifest: ${(error as Error).message}`);
  }
  return errors;
}
