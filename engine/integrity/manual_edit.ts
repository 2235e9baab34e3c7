/**
 * Manual edits of bimri.md (protocol 9.1, FORMATS 13.1): the exact edited
 * bytes are preserved at a content-addressed recovery file, a manual-edit
 * recovery review is created or grown, and a notice names both. The caller
 * (view_sync.ts) then restores the view from the accepted head.
 */
import { BimriError } from "../errors.ts";
import { createExclusive, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { invalidateAuditWitness, type Store } from "../store/store.ts";
import { decodeUtf8Strict, sha256Hex } from "../model/text.ts";
import { raiseManualEditConflict } from "../memory/conflicts.ts";

/** The recovery file name for edited view bytes: `.md` when valid UTF-8, else `.bin`. */
export function manualEditFileName(bytes: Uint8Array): string {
  const extension = decodeUtf8Strict(bytes) === null ? "bin" : "md";
  return `manual-hot-${sha256Hex(bytes)}.${extension}`;
}

/**
 * Writes the evidence file exclusively, or reuses an existing one holding
 * the same bytes. Returns its store-relative path.
 */
export function preserveEvidenceBytes(store: Store, name: string, bytes: Uint8Array): string {
  const path = store.paths.recovery(name);
  const relative = `.bimri/recovery/${name}`;
  const info = lstatOrNull(path);
  if (info === null) {
    if (createExclusive(path, bytes)) return relative;
  }
  const existing = lstatOrNull(path)?.isFile ? readBytesOrNull(path) : null;
  if (existing === null || sha256Hex(existing) !== sha256Hex(bytes)) {
    throw new BimriError(
      "store-corrupt",
      `${relative} exists but does not hold the bytes its name promises; preserve it elsewhere and run doctor.`,
    );
  }
  return relative;
}

/** Preserves a manual edit and returns the stderr notices to print. */
export function preserveManualEdit(store: Store, bytes: Uint8Array): string[] {
  const relative = preserveEvidenceBytes(store, manualEditFileName(bytes), bytes);
  invalidateAuditWitness(store.paths);
  let conflictId: string;
  try {
    conflictId = raiseManualEditConflict(store, relative).conflictId;
  } catch (error) {
    // Nothing may stop the view from healing (protocol 9.5): a damaged
    // conflict record is skipped when the review is raised, and if it still
    // cannot be recorded (no conflict number left, say) the exact bytes are
    // already preserved and the notice names them.
    if (!(error instanceof BimriError)) throw error;
    return [
      `BIMRI NOTICE: a direct edit to bimri.md was preserved at ${relative} and the generated view was restored. Human decision: not recorded while authority recovery is needed (${error.message})`,
    ];
  }
  return [
    `BIMRI NOTICE: a direct edit to bimri.md was preserved at ${relative} and the generated view was restored. Human decision: ${conflictId}.`,
  ];
}
