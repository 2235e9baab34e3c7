/**
 * Integer text as the reference reads its `type=int` flags: Python's `int()`
 * in base 10, restricted to ASCII digits.
 */

// int() trims ASCII whitespace and the non-ASCII characters str.isspace()
// accepts, but not U+001C..U+001F: CPython keeps ASCII characters as they are
// and then trims only " \t\n\v\f\r" (engine/model/text.ts's pyStrip trims
// those four as well, so it is not used here).
const INT_SPACE = new Set(
  " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" +
    "\u2028\u2029\u202f\u205f\u3000",
);

// An optional sign, then digits where one underscore may separate two digits.
const INT_BODY = /^([+-]?)([0-9]+(?:_[0-9]+)*)$/;

/**
 * The value Python's `int(text)` gives for `text` (surrounding whitespace,
 * a sign, single underscores between digits), or undefined where `int()`
 * raises ValueError or a digit is not ASCII.
 */
export function parsePyInt(text: string): bigint | undefined {
  let start = 0;
  let end = text.length;
  while (start < end && INT_SPACE.has(text[start])) start++;
  while (end > start && INT_SPACE.has(text[end - 1])) end--;
  const match = INT_BODY.exec(text.slice(start, end));
  if (match === null) return undefined;
  // BigInt keeps every digit: a huge value must reach the range check as huge, not rounded.
  const magnitude = BigInt(match[2].replaceAll("_", ""));
  return match[1] === "-" ? -magnitude : magnitude;
}
