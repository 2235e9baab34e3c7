/** engine/model/text.ts: code point counting agrees with string iteration, lone surrogates included. */
import { assertEquals } from "../helpers/assert.ts";
import { codePointLength } from "../../engine/model/text.ts";

Deno.test("codePointLength counts like the string iterator", () => {
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
  }
});
