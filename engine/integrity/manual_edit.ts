/**
 * Manual edits of bimri.md (protocol 9.1): preserve the exact bytes,
 * record a recovery review, and report it. Implemented by the integrity work.
 */
import { BimriError } from "../errors.ts";
import type { Store } from "../store/store.ts";

/** Preserves a manual edit and returns the stderr notices to print. */
export function preserveManualEdit(_store: Store, _bytes: Uint8Array): string[] {
  throw new BimriError(
    "refused",
    "bimri.md was edited directly; manual-edit recovery is not available yet.",
  );
}
