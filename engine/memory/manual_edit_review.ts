/**
 * A direct edit of bimri.md as the write path records it: integrity preserves
 * the exact bytes, this raises (or grows) the manual-edit recovery review and
 * returns the notice naming both. The caller (view_sync.ts) then restores the
 * view from the accepted head.
 */
import { BimriError } from "../errors.ts";
import { invalidateAuditWitness, type Store } from "../store/store.ts";
import { manualEditFileName, preserveEvidenceBytes } from "../integrity/manual_edit.ts";
import { raiseManualEditConflict } from "./conflicts.ts";

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
