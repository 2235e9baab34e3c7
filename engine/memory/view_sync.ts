/**
 * Keeps bimri.md equal to the accepted head: regenerate a missing view,
 * silently heal a view equal to a referenced revision, and hand any other
 * difference to manual-edit recovery (integrity preserves the exact bytes,
 * `preserveManualEdit` raises or grows the review, then the view is restored).
 */
import { atomicReplace, readBytesOrNull } from "../store/files.ts";
import { invalidateAuditWitness, registerViewRepair, type Store } from "../store/store.ts";
import { decodeUtf8Strict, sha256Hex } from "../model/text.ts";
import { BimriError } from "../errors.ts";
import { manualEditFileName, preserveEvidenceBytes } from "../integrity/manual_edit.ts";
import { raiseManualEditConflict } from "./conflicts.ts";

/** Result of synchronizing the view. */
export type ViewSyncResult = {
  /** stderr notices (manual edit preserved). */
  notices: string[];
  /** Warnings (a failed refresh is retried by the next command). */
  warnings: string[];
};

/**
 * True when `bytes` are exactly the UTF-8 of `text`. Strict decoding is one
 * to one, so comparing strings natively equals comparing bytes, without a
 * byte loop over a 48 KB view on every command.
 */
function holdsExactly(bytes: Uint8Array, text: string): boolean {
  return bytes.length >= text.length && decodeUtf8Strict(bytes) === text;
}

/** Writes bimri.md from the head; on failure returns a warning instead of failing the command. */
export function refreshView(store: Store): string | null {
  try {
    atomicReplace(store.paths.view, store.head.text);
    return null;
  } catch (error) {
    return `BIMRI WARNING: bimri.md could not be refreshed (${
      (error as Error).message
    }); the next command retries.`;
  }
}

/**
 * Synchronizes bimri.md with the accepted head (must run under the engine
 * lock). `beforeReview` runs before a direct edit is preserved and reviewed
 * (the only branch that writes authority), so a verb may stop there first.
 */
export function syncView(store: Store, beforeReview: () => void = () => {}): ViewSyncResult {
  const result: ViewSyncResult = { notices: [], warnings: [] };
  const current = readBytesOrNull(store.paths.view);
  if (current !== null && holdsExactly(current, store.head.text)) return result;
  if (current === null || isReferencedRevision(store, sha256Hex(current))) {
    const warning = refreshView(store);
    if (warning) result.warnings.push(warning);
    return result;
  }
  beforeReview();
  result.notices.push(...preserveManualEdit(store, current));
  const warning = refreshView(store);
  if (warning) result.warnings.push(warning);
  return result;
}

/**
 * True when `hash` is the hash of a revision the store references: V000000,
 * the head, an accepted decision's revision, or a resolved resolution's revision_after.
 */
function isReferencedRevision(store: Store, hash: string): boolean {
  if (hash === store.head.hash) return true;
  const genesis = readBytesOrNull(store.paths.revision(0));
  if (genesis !== null && sha256Hex(genesis) === hash) return true;
  // Walking back from the head finds the accepted revisions without reading every decision.
  for (let n = store.head.revision - 1; n > 0; n--) {
    const bytes = readBytesOrNull(store.paths.revision(n));
    if (bytes !== null && sha256Hex(bytes) === hash) return true;
  }
  return false;
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

// trimB (issue 42): start and propose reach syncView through view_on_demand.ts,
// which loads this module only when bimri.md differs from the head.
registerViewRepair(syncView);
