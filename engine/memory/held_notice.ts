/**
 * The words of a held proposal's notice on stderr: which proposal and key
 * were held, and the next step (propose, sync and close print them).
 */

/** The next step for a proposal held for `reason` (stderr lines of propose, sync and close). */
export function heldNextStep(key: string, reason: string): string {
  return reason === "classification-required"
    ? `if ${key} is a new subject, propose it again with --new-subject; else reuse the existing key (bimri search)`
    : "the owner decides it in `bimri review`";
}

/**
 * The stderr line beside a `BIMRI HELD:` notice (whose text the reference
 * fixes): which proposal and key were held, and the next step.
 */
export function heldDetail(proposal: string, key: string, reason: string): string {
  return `BIMRI: held ${proposal} [${key}]: ${heldNextStep(key, reason)}.`;
}
