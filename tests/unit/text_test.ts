/** engine/model/text.ts: code point counting agrees with string iteration, lone surrogates included. */
import { assertEquals } from "../helpers/assert.ts";
import { codePointLength, pyPercent, sliceCodePoints } from "../../engine/model/text.ts";

Deno.test("codePointLength and sliceCodePoints count like the string iterator", () => {
  const pieces = ["a", "é", "한", "😀", "\ud800", "\udc00", "\ud83d", "👩‍💻", " ", ""];
  let seed = 11;
  for (let i = 0; i < 5000; i++) {
    let text = "";
    const n = i % 9;
    for (let j = 0; j < n; j++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      text += pieces[seed % pieces.length];
    }
    assertEquals(codePointLength(text), [...text].length, JSON.stringify(text));
    for (const count of [0, 1, 3]) {
      assertEquals(sliceCodePoints(text, count), [...text].slice(0, count).join(""));
    }
  }
});

Deno.test("pyPercent rounds like Python's .0% format, ties to even", () => {
  // Expected values printed by python3: format(a / b, ".0%").
  const cases: [number, number, number][] = [
    [473, 94600, 0],
    [473, 18920, 2],
    [1, 200, 0],
    [3, 200, 2],
    [5, 200, 2],
    [473, 49152, 1],
    [1, 8, 12],
    [27, 200, 14],
    [45000, 49152, 92],
    [49152, 49152, 100],
    [1, 3, 33],
    [2, 3, 67],
    [7, 8, 88],
    [0, 5, 0],
  ];
  for (const [a, b, expected] of cases) assertEquals(pyPercent(a / b), expected, `${a}/${b}`);
});
