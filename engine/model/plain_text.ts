/**
 * The text rules every store command needs, without hashing (text.ts, which
 * hashes, re-exports them): Python-compatible trimming and line splitting,
 * code-point length and order, and UTF-8 encoding and strict decoding.
 */

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

const encoder = new TextEncoder();

/** UTF-8 bytes of `text`. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
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
