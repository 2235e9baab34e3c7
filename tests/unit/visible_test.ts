import { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  hasHazard,
  refusedTextCharacter,
  visible,
  visibleDeep,
  visibleOutput,
} from "../../engine/model/visible.ts";

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

Deno.test("visibleOutput keeps line feeds and tabs, and JSON stays JSON with the same values", () => {
  assertEquals(visibleOutput("a\tb\nc\x1b[2J\rd\u202ee"), "a\tb\nc\\u001b[2J\\u000dd\\u202ee");
  const doc = JSON.stringify({ text: "x\u202ey\u2028z\x7f\x9b" }, null, 2);
  const shown = visibleOutput(doc);
  assertEquals(/[\u202e\u2028\x7f\x9b]/.test(shown), false);
  assertEquals(JSON.parse(shown), JSON.parse(doc));
  assertEquals(visibleOutput("ordinary\ttext\n"), "ordinary\ttext\n");
});

Deno.test("visibleDeep escapes every string of a structured result", () => {
  assertEquals(visibleDeep({ a: ["x\u200by", 1, null], "k\u202e": { b: "\x1b" } }), {
    a: ["x\\u200by", 1, null],
    "k\\u202e": { b: "\\u001b" },
  });
});

Deno.test("output and memory text are judged alike whether short, long, plain or not", () => {
  // Short plain text skips the expressions; anything else, or anything longer, meets them.
  const plain = "R000001-E001 ordinary\ttext\n";
  assertEquals(visibleOutput(plain), plain);
  assertEquals(refusedTextCharacter(plain), null);
  const long = "x".repeat(9000);
  assertEquals(visibleOutput(long), long);
  assertEquals(refusedTextCharacter(long), null);
  assertEquals(visibleOutput(`${long}\u202e`), `${long}\\u202e`);
  assertEquals(refusedTextCharacter(`${long}\u202e`), { escape: "\\u202e", offset: 9000 });
  assertEquals(visibleOutput("a\rb\x7fc"), "a\\u000db\\u007fc");
  assertEquals(visibleOutput("a\x1bb"), "a\\u001bb");
  assertEquals(refusedTextCharacter("a\rb"), null); // C0 controls are the single-line rules' to judge
  assertEquals(refusedTextCharacter("caf\u00e9 \u200b"), { escape: "\\u200b", offset: 5 });
  assertEquals(visibleOutput("caf\u00e9"), "caf\u00e9");
});

Deno.test("characters that render as nothing, and tag characters, are shown and refused", () => {
  const hidden = "run" + String.fromCodePoint(0xe0049, 0xe0047) + "\u3164\u00ad";
  assertEquals(visible(hidden), "run\\udb40\\udc49\\udb40\\udc47\\u3164\\u00ad");
  const doc = JSON.stringify({ text: hidden });
  assertEquals(JSON.parse(visibleOutput(doc)), JSON.parse(doc)); // JSON's own escapes
  assertEquals(refusedTextCharacter(hidden), { escape: "\\udb40\\udc49", offset: 3 });
  // A soft hyphen is a hyphenation hint: shown escaped, never refused; emoji are untouched.
  assertEquals(refusedTextCharacter("co\u00adop"), null);
  assertEquals(visible("\u2764\ufe0f"), "\u2764\ufe0f");
});
