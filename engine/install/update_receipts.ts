/**
 * Earlier update receipts under `.bimri-update-backups/`, checked and
 * recovered before a code-only update, as the reference installer does
 * before its own: every transaction folder must hold a readable
 * `install-manifest.json` with a release identity the reference accepts,
 * and an update that was cut short (`prepared`, or a rollback that did not
 * finish) gets its program files back before the new update starts. Left
 * as it was, such a receipt stops the reference's next update for good once
 * memory has changed ("cannot resume because protected memory differs").
 *
 * Program files changed since the cut update (an owner's edit of AGENTS.md,
 * say) are kept in the transaction's `displaced/` folder before they are
 * restored over, so no bytes are lost.
 */
import { collectGarbage } from "../integrity/heap.ts";
import { dirname, join } from "node:path";
import { BimriError } from "../errors.ts";
import { sha256Hex } from "../model/text.ts";
import { utcTimestamp } from "../model/time.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import type { JsonObject } from "../model/json.ts";
import { atomicReplace, listNames, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { PREPARING_PREFIX, refuseUnsafeWriteFolder, UPDATE_BACKUPS } from "../migrate/v502.ts";

/** What an update receipt records about one program path before the update replaced it. */
export type UpdateRecord = { existed: boolean; backup: string | null; sha256: string | null };

/** (engine release, memory format) pairs the reference installer accepts in a receipt. */
const ACCEPTED_IDENTITIES = ["5.0.3/5.0.2", "5.1.0/5.1.0", "5.1.1/5.1.0", "5.1.2/5.1.0"];

/** A folder the reference installer passes over: an update still being prepared. */
const PREPARING = new RegExp(`^\\${PREPARING_PREFIX}[0-9]{8}-[0-9]{6}-[0-9a-f]{8}$`);

const NEXT_STEP = "Nothing was changed.";

/** Removes `path`; a path that is already gone is fine. */
export function removeIfPresent(path: string): void {
  try {
    Deno.removeSync(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/**
 * Puts every recorded program path back as the receipt found it (a backup
 * whose hash no longer matches is not used); returns what could not be restored.
 */
export function restoreUpdateRecords(
  target: string,
  backupDir: string,
  records: Record<string, UpdateRecord>,
): string[] {
  const errors: string[] = [];
  for (const [name, record] of Object.entries(records)) {
    const path = join(target, name);
    try {
      if (record.existed && record.backup) {
        const bytes = Deno.readFileSync(join(backupDir, record.backup));
        if (sha256Hex(bytes) !== record.sha256) throw new Error("its backup changed");
        atomicReplace(path, bytes);
      } else removeIfPresent(path);
    } catch (error) {
      errors.push(`could not restore ${name}: ${(error as Error).message}`);
    }
  }
  return errors;
}

function isUpdateRecord(value: unknown): value is UpdateRecord {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const r = value as Record<string, unknown>;
  return typeof r.existed === "boolean" &&
    (r.backup === null || typeof r.backup === "string") &&
    (r.sha256 === null || typeof r.sha256 === "string");
}

/** Copies each program file the restore would overwrite with other bytes into `displaced/`. */
function keepDisplaced(
  target: string,
  backupDir: string,
  records: Record<string, UpdateRecord>,
): void {
  for (const [name, record] of Object.entries(records)) {
    const info = lstatOrNull(join(target, name));
    if (!info || !info.isFile || info.isSymlink) continue;
    const current = readBytesOrNull(join(target, name));
    if (current === null || (record.existed && sha256Hex(current) === record.sha256)) continue;
    const kept = join(backupDir, "displaced", name);
    Deno.mkdirSync(dirname(kept), { recursive: true });
    atomicReplace(kept, current);
  }
}

function readManifest(folder: string, name: string): JsonObject {
  const path = join(folder, "install-manifest.json");
  const info = lstatOrNull(path);
  if (!info || !info.isFile || info.isSymlink) {
    throw new BimriError(
      "store-unsafe",
      `code-update backup is missing a safe manifest: ${UPDATE_BACKUPS}/${name}. Move that folder out of ${UPDATE_BACKUPS}, then rerun install. ${NEXT_STEP}`,
    );
  }
  let value: unknown = null;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(readBytesOrNull(path)!));
  } catch {
    value = null;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new BimriError(
      "store-unsafe",
      `code-update manifest is unreadable or not an object: ${UPDATE_BACKUPS}/${name}/install-manifest.json. Move that folder out of ${UPDATE_BACKUPS}, then rerun install. ${NEXT_STEP}`,
    );
  }
  return value as JsonObject;
}

/** Restores the program files of a cut-short update and marks its receipt; returns a notice. */
function recoverCutShort(target: string, folder: string, name: string, m: JsonObject): string {
  const records = m.records;
  if (
    records === null || typeof records !== "object" || Array.isArray(records) ||
    !Object.values(records).every(isUpdateRecord)
  ) {
    throw new BimriError(
      "store-unsafe",
      `the interrupted update in ${UPDATE_BACKUPS}/${name} has an unreadable records list; restore its program files by hand from its files/ folder, then move the folder aside and rerun install. ${NEXT_STEP}`,
    );
  }
  const typed = records as unknown as Record<string, UpdateRecord>;
  keepDisplaced(target, folder, typed);
  const errors = restoreUpdateRecords(target, folder, typed);
  const manifestPath = join(folder, "install-manifest.json");
  if (errors.length > 0) {
    atomicReplace(
      manifestPath,
      canonicalJson({
        ...m,
        status: "rollback-incomplete",
        restored_at: utcTimestamp(),
        rollback_errors: errors,
      }),
    );
    throw new BimriError(
      "io",
      `an interrupted code-only update could not be restored: ${errors.join("; ")}`,
    );
  }
  atomicReplace(
    manifestPath,
    canonicalJson({ ...m, status: "restored-before-retry", restored_at: utcTimestamp() }),
  );
  const displaced = lstatOrNull(join(folder, "displaced")) !== null;
  return `Restored the program files of the interrupted update in ${UPDATE_BACKUPS}/${name} before this one${
    displaced ? ` (files changed since are kept in ${UPDATE_BACKUPS}/${name}/displaced/)` : ""
  }.`;
}

/**
 * Checks every earlier update receipt of `target` and recovers the ones a
 * crash cut short; returns one notice per recovered update. Refuses (exit 2,
 * nothing changed) a folder the reference installer would refuse. Call
 * under the engine lock, before the new update writes anything.
 */
export function recoverEarlierUpdates(target: string): string[] {
  const base = join(target, UPDATE_BACKUPS);
  refuseUnsafeWriteFolder(target, UPDATE_BACKUPS);
  if (lstatOrNull(base) === null) return [];
  const notices: string[] = [];
  for (const name of listNames(base).sort()) {
    const folder = join(base, name);
    const entry = lstatOrNull(folder);
    if (!entry || entry.isSymlink || !entry.isDirectory) {
      throw new BimriError(
        "store-unsafe",
        `code-update backup root contains an unsafe entry: ${UPDATE_BACKUPS}/${name}. Move it out of ${UPDATE_BACKUPS}, then rerun install. ${NEXT_STEP}`,
      );
    }
    if (PREPARING.test(name)) continue;
    const m = readManifest(folder, name);
    if (!ACCEPTED_IDENTITIES.includes(`${m.engine_release}/${m.memory_format}`)) {
      throw new BimriError(
        "store-unsafe",
        `code-update receipt ${UPDATE_BACKUPS}/${name}/install-manifest.json has an unsupported release identity (engine ${m.engine_release}, memory format ${m.memory_format}). Restore the receipt the installer wrote, or move that folder out of ${UPDATE_BACKUPS}, then rerun install. ${NEXT_STEP}`,
      );
    }
    if (m.status === "prepared" || m.status === "rollback-incomplete") {
      notices.push(recoverCutShort(target, folder, name, m));
    } else if (m.status === "prepared-for-authority-activation") {
      throw new BimriError(
        "refused",
        `${UPDATE_BACKUPS}/${name} records an authority activation that another engine's install did not finish; rerun that engine's install --quiescent to finish or undo it. ${NEXT_STEP}`,
      );
    }
    // A large store's receipt lists every record (MB of JSON); do not let them pile up (see heap.ts).
    collectGarbage();
  }
  return notices;
}
