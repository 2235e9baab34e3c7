/**
 * Evidence of manual edits (protocol 9.1, FORMATS 13.1): the exact edited
 * bytes are preserved at a content-addressed recovery file, created
 * exclusively or reused when it holds the same bytes. The write path
 * (memory/view_sync.ts preserveManualEdit) raises the owner's recovery review.
 */
import { BimriError } from "../errors.ts";
import { createExclusive, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import type { Store } from "../store/store.ts";
import { decodeUtf8Strict, sha256Hex } from "../model/text.ts";

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
