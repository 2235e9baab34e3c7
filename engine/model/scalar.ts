/**
 * Authored scalars (texts, keys, actors, tags, IDs given on the command line)
 * checked and trimmed exactly as the reference engine does, with its messages
 * and in its order, so the same input is refused with the same words.
 */
import { BimriError } from "../errors.ts";
import { codePointLength, pyStrip, splitLines } from "./text.ts";

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
