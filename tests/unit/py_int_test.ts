/**
 * engine/model/py_int.ts against what Python 3's int() returns or refuses
 * (expected values taken from CPython 3.11), limited to ASCII digits.
 */
import { assertEquals } from "../helpers/assert.ts";
import { parsePyInt } from "../../engine/model/py_repr.ts";

const ACCEPTED: [string, bigint][] = [
  ["0", 0n],
  ["5", 5n],
  ["007", 7n],
  ["-0", 0n],
  ["+5", 5n],
  ["-1", -1n],
  ["1_0", 10n],
  ["1_0_0", 100n],
  ["-1_0", -10n],
  ["0_0", 0n],
  [" 5 ", 5n],
  ["\t\n\v\f\r5\r\n", 5n],
  // Non-ASCII whitespace that str.isspace() accepts.
  ["\x855\xa0", 5n],
  ["\u3000+5\u2028", 5n],
  ["\u1680\u2000\u200a\u2029\u202f\u205f-7", -7n],
  // Beyond 2^53: exact, not rounded.
  ["123456789012345678901234567890", 123456789012345678901234567890n],
];

const REFUSED: string[] = [
  "",
  " ",
  "+",
  "-",
  "_1",
  "1_",
  "1__0",
  "+_1",
  "_",
  "+ 1",
  "- 1",
  "--1",
  "+-1",
  "1 0",
  "1.0",
  "1e3",
  "0x10",
  "٥", // Arabic-Indic five: int() takes it, bimri keeps to ASCII digits.
  "\ufeff1", // not whitespace for Python
  "\x1c1", // isspace(), yet int() keeps ASCII control characters and refuses them
  "1\x1f",
  "\u180e1",
];

Deno.test("parsePyInt returns what int() returns", () => {
  for (const [text, expected] of ACCEPTED) {
    assertEquals(parsePyInt(text), expected, JSON.stringify(text));
  }
});

Deno.test("parsePyInt refuses what int() refuses", () => {
  for (const text of REFUSED) assertEquals(parsePyInt(text), undefined, JSON.stringify(text));
});
