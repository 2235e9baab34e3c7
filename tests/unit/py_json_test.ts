/** engine/model/py_json.ts: Python's view of a decoded JSON value (number kinds, repr). */
import { assertEquals, assertThrows } from "../helpers/assert.ts";
import { parsePyJson, pyFloatRepr, pyRepr } from "../../engine/model/py_json.ts";
import { pyStringRepr } from "../../engine/model/py_repr.ts";

Deno.test("pyFloatRepr prints floats as Python's repr does", () => {
  const cases: [number, string][] = [
    [2, "2.0"],
    [-0, "-0.0"],
    [0.1, "0.1"],
    [1.5, "1.5"],
    [123456.789, "123456.789"],
    [1e15, "1000000000000000.0"],
    [1e16, "1e+16"],
    [1.5e16, "1.5e+16"],
    [1e20, "1e+20"],
    [1e-4, "0.0001"],
    [1.25e-4, "0.000125"],
    [1e-5, "1e-05"],
    [-2.5e-7, "-2.5e-07"],
    [1e100, "1e+100"],
    [5e-324, "5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [Infinity, "inf"],
    [-Infinity, "-inf"],
    [NaN, "nan"],
  ];
  for (const [value, text] of cases) assertEquals(pyFloatRepr(value), text, String(value));
});

Deno.test("pyStringRepr quotes and escapes as Python's repr does", () => {
  assertEquals(pyStringRepr("abc"), "'abc'");
  assertEquals(pyStringRepr("it's"), `"it's"`);
  assertEquals(pyStringRepr(`it's "q"`), `'it\\'s "q"'`);
  assertEquals(pyStringRepr("a\\b\tc\nd\re"), "'a\\\\b\\tc\\nd\\re'");
  assertEquals(pyStringRepr("\x00\x1f\x7f"), "'\\x00\\x1f\\x7f'");
  assertEquals(pyStringRepr("café ü"), "'café ü'");
  assertEquals(pyStringRepr("\x85\xa0"), "'\\x85\\xa0'");
  assertEquals(pyStringRepr("\u2028\u200b\ufeff"), "'\\u2028\\u200b\\ufeff'");
  assertEquals(pyStringRepr("\ud800"), "'\\ud800'");
  assertEquals(pyStringRepr("😀\u{e0001}"), "'😀\\U000e0001'");
});

Deno.test("parsePyJson keeps number literals; pyRepr prints Python's view of the value", () => {
  const value = parsePyJson('{"i": 7, "f": 7.0, "e": 2E3, "big": 98765432109876543210, "l": []}');
  assertEquals(
    pyRepr(value),
    "{'i': 7, 'f': 7.0, 'e': 2000.0, 'big': 98765432109876543210, 'l': []}",
  );
  assertEquals(pyRepr(parsePyJson("[false, null, {}]")), "[False, None, {}]");
  // NaN and the infinities are numbers to json.loads; inside a string they are text.
  assertEquals(
    pyRepr(
      parsePyJson('{"a": NaN, "b": [Infinity, -Infinity], "s": "NaN \\" Infinity", "z": 0e-17}'),
    ),
    `{'a': nan, 'b': [inf, -inf], 's': 'NaN " Infinity', 'z': 0.0}`,
  );
  assertThrows(() => parsePyJson('{"x": -NaN}'));
  assertThrows(() => parsePyJson('{"x": NaNx}'));
  assertThrows(() => parsePyJson('{"x": nan}'));
});
