import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { hasHazard, refusedTextCharacter, visible } from "../../engine/model/visible.ts";

Deno.test("visible escapes controls, bidi, zero-width and separators, keeps ordinary text", () => {
  assertEquals(visible("a\nb\x1b[31m"), "a\\u000ab\\u001b[31m");
  assertEquals(visible("x\u202ey\u200bz\u0085\u2028"), "x\\u202ey\\u200bz\\u0085\\u2028");
  assertEquals(visible("Ünïcödé, C:\\path, emoji 🚀"), "Ünïcödé, C:\\path, emoji 🚀");
  assertEquals(hasHazard("plain"), false);
  assertEquals(hasHazard("tab\there"), true);
  assertEquals(hasHazard("plain"), false);
});

Deno.test("refusedTextCharacter names the first refused character and its offset", () => {
  assertEquals(refusedTextCharacter("ok text"), null);
  assertEquals(refusedTextCharacter("🚀a\u202eb"), { escape: "\\u202e", offset: 2 });
  assertEquals(refusedTextCharacter("del\x7f"), { escape: "\\u007f", offset: 3 });
});
