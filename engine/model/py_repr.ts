/**
 * What the CLI's flag parser needs of Python, as the reference's argparse
 * behaves: `repr()` of a string and the invalid-choice refusal built on it,
 * and `int()` of integer flag text. Kept apart from py_json.ts so the flag
 * parser loads only this one module.
 */

// str.isprintable() is false for these categories (the space character aside).
// Built on first use: a \p{...} regex literal at a module's top level costs
// every process that loads it ~4M instructions (V8 checks it while parsing).
let notPrintable: RegExp | null = null;
function isNotPrintable(ch: string): boolean {
  notPrintable ??= /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;
  return notPrintable.test(ch);
}

/** Python's `repr(str)`: single quotes unless only double quotes avoid escaping. */
export function pyStringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === quote || ch === "\\") out += "\\" + ch;
    else if (ch === "\t") out += "\\t";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (code < 0x20 || code === 0x7f) out += "\\x" + hex(code, 2);
    else if (code < 0x7f || ch === " " || !isNotPrintable(ch)) out += ch;
    else if (code <= 0xff) out += "\\x" + hex(code, 2);
    else if (code <= 0xffff) out += "\\u" + hex(code, 4);
    else out += "\\U" + hex(code, 8);
  }
  return out + quote;
}

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, "0");
}

/**
 * The refusal of a value outside a flag's choices in argparse's own words
 * (`argument --trust: invalid choice: 'contested' (choose from 'confirmed',
 * 'working')`), which scripts written against the reference engine look for.
 */
export function invalidChoice(name: string, value: string, choices: readonly string[]): string {
  return `argument --${name}: invalid choice: ${pyStringRepr(value)} (choose from ${
    choices.map(pyStringRepr).join(", ")
  })`;
}

// Integer text as the reference reads its `type=int` flags: Python's `int()`
// in base 10, restricted to ASCII digits.

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
