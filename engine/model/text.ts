/**
 * Text rules shared by every format: Python-compatible trimming and line
 * splitting, code-point lengths, single-line validation and hashing.
 */
import { sha256HexOfBytes } from "./sha256.ts";

// Python's str.strip() removes these (whitespace per str.isspace), not U+FEFF.
const STRIP_CHARS =
  "\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000";
const STRIP_SET = new Set(STRIP_CHARS);

/** Trims exactly the characters Python's `str.strip()` removes. */
export function pyStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && STRIP_SET.has(text[start])) start++;
  while (end > start && STRIP_SET.has(text[end - 1])) end--;
  return text.slice(start, end);
}

/** Trims the right side the way Python's `str.rstrip()` does. */
export function pyRstrip(text: string): string {
  let end = text.length;
  while (end > 0 && STRIP_SET.has(text[end - 1])) end--;
  return text.slice(0, end);
}

/** True when `ch` is whitespace for Python's `str.isspace()`. */
export function isPySpace(ch: string): boolean {
  return STRIP_SET.has(ch);
}

// Line boundaries of Python's str.splitlines().
// deno-lint-ignore no-control-regex -- these are exactly the breaks Python splitlines() honours
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

/** Splits like Python's `str.splitlines()` (no trailing empty element). */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const parts = text.split(LINE_BREAK);
  // A trailing empty part exists exactly when the text ends with a break.
  if (parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/**
 * The LF-separated lines of `text` that contain `part` (every line for ""),
 * found with indexOf: a caller looking for one proposal or key in a month of
 * archive rows parses only those.
 */
export function linesContaining(text: string, part: string): string[] {
  if (part === "") return text.split("\n");
  const lines: string[] = [];
  let at = text.indexOf(part);
  while (at !== -1) {
    const start = text.lastIndexOf("\n", at) + 1;
    const newline = text.indexOf("\n", at);
    const end = newline === -1 ? text.length : newline;
    lines.push(text.slice(start, end));
    at = newline === -1 ? -1 : text.indexOf(part, end);
  }
  return lines;
}

const HIGH_SURROGATE = /[\ud800-\udbff]/;
const SURROGATE_PAIR = /[\ud800-\udbff][\udc00-\udfff]/g;

/** Number of Unicode code points in `text`. */
export function codePointLength(text: string): number {
  // Each surrogate pair is one code point; a lone surrogate counts as one, as
  // string iteration counts it. The scans are native regular expressions: a
  // short-lived process runs a char-code loop in the interpreter, about a
  // millisecond over a full 48 KB view, and most text has no surrogate at all.
  if (!HIGH_SURROGATE.test(text)) return text.length;
  return text.length - (text.match(SURROGATE_PAIR)?.length ?? 0);
}

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

const encoder = new TextEncoder();

/** UTF-8 bytes of `text`. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** UTF-8 byte length of `text`. */
export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/** Lowercase hex SHA-256 of bytes or of the UTF-8 of a string. */
export function sha256Hex(data: Uint8Array | string): string {
  return sha256HexOfBytes(typeof data === "string" ? encoder.encode(data) : data);
}

/** Line hash: SHA-256 of the trimmed line, or `absent` when there is no line. */
export function lineHash(line: string | null): string {
  return line === null ? "absent" : sha256Hex(pyStrip(line));
}

/** Decodes strict UTF-8; returns null when the bytes are not valid UTF-8. */
export function decodeUtf8Strict(bytes: Uint8Array): string | null {
  // The lenient decoder is markedly cheaper on large files; it yields the
  // same string for valid input and marks invalid input with U+FFFD, so only
  // text holding that character needs the strict decoder's verdict.
  const text = LENIENT_UTF8.decode(bytes);
  if (!text.includes("\ufffd")) return text;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}

const LENIENT_UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** Code-point order, as Python compares strings (not UTF-16 unit order). */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  // UTF-16 order is code-point order unless a surrogate decides: compare units first.
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if ((x & 0xf800) === 0xd800 || (y & 0xf800) === 0xd800) return compareBySpread(a, b);
    return x - y;
  }
  const last = n > 0 ? a.charCodeAt(n - 1) : 0;
  if ((last & 0xfc00) === 0xd800) return compareBySpread(a, b);
  return a.length - b.length;
}

function compareBySpread(a: string, b: string): number {
  const left = [...a];
  const right = [...b];
  const n = Math.min(left.length, right.length);
  for (let i = 0; i < n; i++) {
    const diff = left[i].codePointAt(0)! - right[i].codePointAt(0)!;
    if (diff !== 0) return diff;
  }
  return left.length - right.length;
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
