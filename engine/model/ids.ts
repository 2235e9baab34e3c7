/**
 * ID grammars and formatting for runs, entries, proposals, conflicts,
 * patterns, revisions, and the checks of authored scalars every ID goes
 * through (see the section at the end).
 */
import { BimriError } from "../errors.ts";
import { codePointLength, pyStrip, splitLines } from "./plain_text.ts";

/** Run handle, e.g. R000042. */
export const RUN_ID = /^R[0-9]{6}$/;
/** Journal entry written now, e.g. R000042-E003. */
export const ENTRY_ID = /^R[0-9]{6}-E[0-9]{3}$/;
/** Entry IDs accepted in memory lines (migrated forms included). */
export const ANY_ENTRY_ID = /^R[0-9]+-E[0-9]+$/;
/** Proposal ID, e.g. R000042-Q002. */
export const PROPOSAL_ID = /^R[0-9]{6}-Q[0-9]{3}$/;
/** Conflict ID, e.g. C000007. */
export const CONFLICT_ID = /^C[0-9]{6}$/;
/** Pattern ID, e.g. P0001. */
export const PATTERN_ID = /^P[0-9]+$/;
/** Stable memory key. */
export const KEY = /^[a-z0-9]+([.-][a-z0-9]+)*$/;
/** Actor slug. */
export const ACTOR = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** Tag slug. */
export const TAG = /^[a-z0-9][a-z0-9._-]{0,39}$/;
/** Maximum key length. */
export const KEY_MAX = 80;

/** Formats a run number as R######. */
export function runId(n: number): string {
  return `R${String(n).padStart(6, "0")}`;
}

/** Formats a revision number as V######. */
export function revisionName(n: number): string {
  return `V${String(n).padStart(6, "0")}`;
}

/** Formats a conflict number as C######. */
export function conflictId(n: number): string {
  return `C${String(n).padStart(6, "0")}`;
}

/** Formats a pattern number as P####. */
export function patternId(n: number): string {
  return `P${String(n).padStart(4, "0")}`;
}

/** Entry ID for `run` and per-run number. */
export function entryId(run: string, n: number): string {
  return `${run}-E${String(n).padStart(3, "0")}`;
}

/** Proposal ID for `run` and per-run number. */
export function proposalId(run: string, n: number): string {
  return `${run}-Q${String(n).padStart(3, "0")}`;
}

/** Number part of an ID such as R000042 or C000007. */
export function idNumber(id: string): number {
  return Number.parseInt(id.slice(1), 10);
}

/** Validates a run handle given on the command line; returns it trimmed. */
export function requireRunId(value: string): string {
  return validateFixedId(value, RUN_ID, "run ID");
}

/** Validates a stable key given on the command line; returns it trimmed and lowercased. */
export function requireKey(value: string): string {
  const key = cleanScalar(value, "key", KEY_MAX).toLowerCase();
  if (!KEY.test(key)) {
    throw new BimriError(
      "invalid-input",
      "key must use lowercase dotted or hyphenated words, for example launch.price.",
    );
  }
  return key;
}

/** Validates an actor given on the command line; returns it trimmed and lowercased ("" is `agent`). */
export function requireActor(value: string): string {
  const actor = cleanScalar(value === "" ? "agent" : value, "actor", 64).toLowerCase();
  if (!ACTOR.test(actor)) throw new BimriError("invalid-input", "actor must be a lowercase slug.");
  return actor;
}

/** Validates a proposal ID. */
export function requireProposalId(value: string): string {
  if (!PROPOSAL_ID.test(value)) {
    throw new BimriError("invalid-input", `invalid proposal ID: ${value}`);
  }
  return value;
}

/** Validates a conflict ID given on the command line; returns it trimmed. */
export function requireConflictId(value: string): string {
  return validateFixedId(value, CONFLICT_ID, "conflict ID");
}

// Authored scalars (texts, keys, actors, tags, IDs given on the command line)
// checked and trimmed exactly as the reference engine does, with its messages
// and in its order, so the same input is refused with the same words.

function invalid(message: string): BimriError {
  return new BimriError("invalid-input", message);
}

/**
 * `value` checked as the reference's `clean_scalar`: not blank (unless
 * `allowEmpty`), at most `max` code points before trimming, no newline,
 * carriage return or tab, no other control character, and still one line as
 * Python's `splitlines()` splits (a single trailing U+2028 passes and is
 * trimmed away); returns it trimmed as Python's `strip()` trims.
 */
export function cleanScalar(value: string, name: string, max: number, allowEmpty = false): string {
  if (!allowEmpty && pyStrip(value) === "") throw invalid(`${name} cannot be empty.`);
  if (codePointLength(value) > max) throw invalid(`${name} exceeds ${max} characters.`);
  if (/[\n\r\t]/.test(value)) throw invalid(`${name} must be one line without tabs.`);
  if (hasControlCharacter(value)) throw invalid(`${name} contains control characters.`);
  if (splitLines(value).length > 1) {
    throw invalid(`${name} must not contain Unicode line separators.`);
  }
  return pyStrip(value);
}

/** True when `text` holds a code point below U+0020 (Python's `ord(ch) < 32`). */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x20) return true;
  return false;
}

/** A fixed-format ID (run, conflict, evidence): cleaned, then matched whole; returns it trimmed. */
export function validateFixedId(value: string, pattern: RegExp, name: string): string {
  const id = cleanScalar(value, name, 80);
  if (!pattern.test(id)) throw invalid(`invalid ${name}: ${id}`);
  return id;
}
