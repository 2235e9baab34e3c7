/**
 * Makes untrusted text safe to print: characters that can forge lines, hide
 * text or reorder it on a terminal or in an agent's context are shown as
 * `\uXXXX` escapes instead of being emitted.
 */
import { mapStrings } from "./json.ts";

// C0 controls, DEL, C1 controls; bidi embeddings, overrides, isolates and
// marks; zero-width characters and the BOM; Unicode line/paragraph separators;
// characters that render as nothing (soft hyphen, the combining grapheme
// joiner, Hangul and Khmer fillers, Mongolian vowel separator, deprecated
// format controls) and the tag characters U+E0000-E007F, which can spell
// whole hidden sentences that a language model still reads.
const HAZARD =
  // deno-lint-ignore no-control-regex -- matching control characters is this module's purpose
  /[\x00-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\uffa0\u{e0000}-\u{e007f}]/gu;

// The subset that memory text may never hold (C0 controls are judged by the
// reference's own single-line rules, so they are not repeated here; a soft
// hyphen is a legitimate hyphenation hint, so it is only shown escaped).
const REFUSED_IN_TEXT =
  /[\x7f-\x9f\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufeff\uffa0\u{e0000}-\u{e007f}]/u;

/** `\uXXXX` per UTF-16 unit (a tag character is a surrogate pair): JSON's own escape form. */
function escapeOne(ch: string): string {
  let out = "";
  for (let i = 0; i < ch.length; i++) out += "\\u" + ch.charCodeAt(i).toString(16).padStart(4, "0");
  return out;
}

/** Returns `text` with every hazardous character shown as a `\uXXXX` escape. */
export function visible(text: string): string {
  return text.replace(HAZARD, escapeOne);
}

// The same set without line feed and tab, which structure printed output
// (lines, TSV columns, indented JSON) and never come from memory text.
const HAZARD_IN_OUTPUT =
  // deno-lint-ignore no-control-regex -- matching control characters is this module's purpose
  /[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\uffa0\u{e0000}-\u{e007f}]/gu;

/**
 * Printed output (text or serialized JSON) with every hazardous character
 * except line feeds and tabs shown as a `\uXXXX` escape. Inside a JSON
 * string the escape is JSON's own, so a document decodes to the same values;
 * output without such characters (all ordinary text) is unchanged.
 */
export function visibleOutput(text: string): string {
  return plainShortText(text) ? text : text.replace(HAZARD_IN_OUTPUT, escapeOne);
}

/**
 * True for text of at most PLAIN_SCAN_MAX characters that are all printable
 * ASCII, tabs or line feeds, none of which is ever escaped or refused. Most
 * output and memory text is such text: one loop over it costs a short process
 * a few microseconds, where an expression's first runs (its compilation, then
 * its native code) cost ~0.1 ms. Longer text goes to the expression at once.
 */
function plainShortText(text: string): boolean {
  if (text.length > PLAIN_SCAN_MAX) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x7f || (c < 0x20 && c !== 0x09 && c !== 0x0a)) return false;
  }
  return true;
}

/** The longest text `plainShortText` scans (a journal entry's limit). */
const PLAIN_SCAN_MAX = 8000;

/** `value` with {@link visible} applied to every string in it (for structured results). */
export function visibleDeep(value: unknown): unknown {
  return mapStrings(value, visible);
}

/** True when `text` holds a character that {@link visible} would escape. */
export function hasHazard(text: string): boolean {
  HAZARD.lastIndex = 0;
  const found = HAZARD.test(text);
  HAZARD.lastIndex = 0;
  return found;
}

/**
 * The first character memory text may not hold (DEL, C1 controls, bidi
 * controls, zero-width characters), as its escape and code-point offset, or
 * null when there is none.
 */
export function refusedTextCharacter(
  text: string,
): { escape: string; offset: number } | null {
  if (plainShortText(text)) return null; // every refused character is at or above U+007F
  const match = REFUSED_IN_TEXT.exec(text);
  if (match === null) return null;
  return { escape: escapeOne(match[0]), offset: [...text.slice(0, match.index)].length };
}
