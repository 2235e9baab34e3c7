/**
 * Text rules shared by every format: Python-compatible trimming and line
 * splitting, code-point lengths, single-line validation and hashing. The
 * rules without hashing live in plain_text.ts (re-exported here), so a
 * command that hashes nothing (journal) does not load the SHA-256 code.
 */
import { sha256HexOfBytes } from "./sha256.ts";
import { pyStrip, utf8 } from "./plain_text.ts";

export {
  codePointLength,
  compareCodePoints,
  decodeUtf8Strict,
  isPySpace,
  linesContaining,
  pyRstrip,
  pyStrip,
  splitLines,
  utf8,
} from "./plain_text.ts";

/** The first `count` code points of `text`. */
export function sliceCodePoints(text: string, count: number): string {
  if (text.length <= count) return text;
  // Find where the count-th code point ends and slice once: appending code
  // points one by one builds a chain of string pieces per headline.
  let end = 0;
  for (let n = 0; n < count && end < text.length; n++) {
    const c = text.charCodeAt(end);
    const pair = c >= 0xd800 && c <= 0xdbff && end + 1 < text.length &&
      text.charCodeAt(end + 1) >= 0xdc00 && text.charCodeAt(end + 1) <= 0xdfff;
    end += pair ? 2 : 1;
  }
  return text.slice(0, end);
}

/** True when `text` has a control character or any line break Python recognizes. */
export function hasLineBreakOrControl(text: string): boolean {
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x20 || cp === 0x85 || cp === 0x2028 || cp === 0x2029) return true;
  }
  return false;
}

/** UTF-8 byte length of `text`. */
export function utf8Length(text: string): number {
  return utf8(text).length;
}

/** Lowercase hex SHA-256 of bytes or of the UTF-8 of a string. */
export function sha256Hex(data: Uint8Array | string): string {
  return sha256HexOfBytes(typeof data === "string" ? utf8(data) : data);
}

/** Line hash: SHA-256 of the trimmed line, or `absent` when there is no line. */
export function lineHash(line: string | null): string {
  return line === null ? "absent" : sha256Hex(pyStrip(line));
}

/**
 * Python's `format(ratio, ".0%")` as a number: the ratio times 100 rounded to
 * an integer with ties to even (0.5% prints as 0%, 2.5% as 2%), where
 * Math.round would round ties up.
 */
export function pyPercent(ratio: number): number {
  const scaled = ratio * 100;
  const floor = Math.floor(scaled);
  const fraction = scaled - floor; // exact for any percentage a store can reach
  if (fraction > 0.5) return floor + 1;
  if (fraction < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}
