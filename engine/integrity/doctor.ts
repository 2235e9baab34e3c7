/**
 * `doctor`: the integrity audit of protocol section 12. `readOnly` audits
 * with zero writes of any kind.
 */
import { BimriError } from "../errors.ts";
import { parseView } from "../model/hot.ts";
import { decodeUtf8Strict, sha256Hex } from "../model/text.ts";
import { listNames, lstatOrNull, readBytesOrNull, readTextOrNull } from "../store/files.ts";
import { STORE_FOLDERS, type StorePaths } from "../store/paths.ts";
import { loadState } from "../store/store.ts";
import type { State } from "../model/state.ts";

/** The audit's findings. */
export type DoctorReport = {
  passed: boolean;
  errors: string[];
  warnings: string[];
};

/** Audits the store at `paths` without writing anything. */
export function auditStore(paths: StorePaths): DoctorReport {
  const errors: string[] = [];
  const warnings: string[] = [];
  const dirInfo = lstatOrNull(paths.dir);
  if (!dirInfo || !dirInfo.isDirectory || dirInfo.isSymlink) {
    return { passed: false, errors: ["existing .bimri directory is missing or unsafe."], warnings };
  }
  for (const folder of STORE_FOLDERS) {
    const info = lstatOrNull(paths.folder(folder));
    if (!info || !info.isDirectory || info.isSymlink) {
      errors.push(`.bimri/${folder} is missing or unsafe.`);
    }
  }
  let state: State;
  try {
    state = loadState(paths);
  } catch (error) {
    if (error instanceof BimriError) {
      return { passed: false, errors: [...errors, error.message], warnings };
    }
    throw error;
  }
  const headBytes = readBytesOrNull(paths.revision(state.head_revision));
  if (headBytes === null) {
    errors.push(
      `accepted head revision V${String(state.head_revision).padStart(6, "0")} is missing.`,
    );
  } else {
    if (sha256Hex(headBytes) !== state.head_hash) {
      errors.push("accepted head revision does not match state.head_hash.");
    }
    const text = decodeUtf8Strict(headBytes);
    if (text === null) errors.push("accepted head revision is not valid UTF-8.");
    else {
      const view = parseView(text, state.entry_max_chars);
      for (const problem of view.errors) errors.push(`head revision: ${problem}`);
      for (const { entry } of view.entries) {
        if (state.cold_current[entry.key]) {
          errors.push(`key ${entry.key} is current both hot and cold.`);
        }
      }
    }
    const viewBytes = readBytesOrNull(paths.view);
    if (viewBytes === null) warnings.push("bimri.md is missing; the next command regenerates it.");
    else if (sha256Hex(viewBytes) !== sha256Hex(headBytes)) {
      errors.push(
        "generated bimri.md differs from the accepted head; recovery is needed and read-only doctor left the file unchanged.",
      );
    }
  }
  for (const run of Object.keys(state.active_runs)) {
    if (readTextOrNull(paths.log(run)) === null) errors.push(`active run ${run} has no log.`);
  }
  for (const name of listNames(paths.folder("revisions"))) {
    if (name.startsWith(".bimri-tmp-") || name.startsWith(".bimri-new-")) {
      warnings.push(`abandoned temporary file .bimri/revisions/${name}.`);
    }
  }
  const index = readTextOrNull(paths.index);
  if (index === null) warnings.push("index is missing; run index to rebuild it.");
  else {
    const rows = index.split("\n").filter((l) => l !== "");
    if (rows.some((row) => row.split("\t").length !== 8)) {
      errors.push("index.tsv has rows without 8 columns; run index to rebuild it.");
    }
  }
  return { passed: errors.length === 0, errors, warnings };
}
