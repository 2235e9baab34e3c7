/** engine/model/text.ts: code point counting agrees with string iteration, lone surrogates included. */
import { assertEquals } from "../helpers/assert.ts";
import { codePointLength, sliceCodePoints } from "../../engine/model/text.ts";

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
