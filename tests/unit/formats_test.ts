import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { assert, assertEquals, assertThrows } from "../helpers/assert.ts";
import { canonicalJson, canonicalJsonByHand } from "../../engine/store/canonical_json.ts";
import type { JsonValue } from "../../engine/model/json.ts";
import {
  GENESIS_VIEW,
  normalizeTags,
  parseAnyEntry,
  parseView,
  renderEntry,
} from "../../engine/model/hot.ts";
import { cleanScalar, requireActor, requireKey, requireRunId } from "../../engine/model/ids.ts";
import { pyStrip, sha256Hex, splitLines } from "../../engine/model/text.ts";

const here = fileURLToPath(new URL(".", import.meta.url));

/** The reference's published v5.0.2 store (copied into tests/fixtures, else read from ../shared). */
function referenceFixture(): string {
  for (
    const candidate of [
      join(here, "../fixtures/reference-v5.0.2-populated"),
      join(here, "../../../shared/fixtures/reference-v5.0.2-populated"),
    ]
  ) {
    try {
      if (Deno.statSync(join(candidate, ".bimri")).isDirectory) return candidate;
    } catch { /* try the next */ }
  }
  throw new Error("the reference v5.0.2 fixture store is missing");
}

function filesIn(folder: string, suffix: string): string[] {
  return [...Deno.readDirSync(folder)].filter((e) => e.isFile && e.name.endsWith(suffix))
    .map((e) => join(folder, e.name)).sort();
}

Deno.test("canonical JSON reproduces every JSON record of the reference store byte for byte", () => {
  const root = join(referenceFixture(), ".bimri");
  const files = [join(root, "state.json")];
  for (const folder of ["proposals", "decisions", "conflicts", "resolutions"]) {
    files.push(...filesIn(join(root, folder), ".json"));
  }
  assert(files.length > 20);
  for (const file of files) {
    const text = Deno.readTextFileSync(file);
    assertEquals(canonicalJson(JSON.parse(text) as JsonValue), text, file);
  }
});

Deno.test("canonical JSON escapes like Python json.dumps", () => {
  const text = canonicalJson({
    b: "Café — naïve 🚀 test\u2028\u007f/",
    a: [],
    c: {},
    d: [1, { z: null, y: true }],
  });
  assertEquals(
    text,
    '{\n  "a": [],\n  "b": "Caf\\u00e9 \\u2014 na\\u00efve \\ud83d\\ude80 test\\u2028\\u007f/",\n  "c": {},\n  "d": [\n    1,\n    {\n      "y": true,\n      "z": null\n    }\n  ]\n}\n',
  );
  assertEquals(
    canonicalJson({ "claude:x": 1, "claude-code:y": 2, _audit_epoch: 3, active: 4 }).split("\n")[1],
    '  "_audit_epoch": 3,',
  );
});

Deno.test("the native canonical JSON path equals the hand-written serializer", () => {
  const strings = [
    "",
    "plain",
    "Café",
    "\u0000\u001f\u007f",
    "\ud800",
    "\udc00x",
    "🚀",
    '"\\/',
    "\t\n\r\b\f",
  ];
  const keys = [
    "a",
    "B",
    "_x",
    "é",
    "🚀",
    "10",
    "9",
    "0",
    "01",
    "-1",
    "1.5",
    "4294967295",
    "key.z",
  ];
  let seed = 3;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const make = (depth: number): JsonValue => {
    const kind = next(depth > 3 ? 5 : 7);
    if (kind === 0) return null;
    if (kind === 1) return next(2) === 0;
    if (kind === 2) return [0, -3, 17, 2.5, 1e21, -0.125][next(6)];
    if (kind === 3 || kind === 4) return strings[next(strings.length)];
    if (kind === 5) return Array.from({ length: next(4) }, () => make(depth + 1));
    const object: { [key: string]: JsonValue } = {};
    for (let i = next(5); i > 0; i--) object[keys[next(keys.length)]] = make(depth + 1);
    return object;
  };
  for (let i = 0; i < 3000; i++) {
    const value = make(0);
    assertEquals(canonicalJson(value), canonicalJsonByHand(value), JSON.stringify(value));
  }
});

Deno.test("the genesis view is the reference's 473 bytes", () => {
  assertEquals(new TextEncoder().encode(GENESIS_VIEW).length, 473);
  assertEquals(
    sha256Hex(GENESIS_VIEW),
    "7f19bcffcf30b12637add89f2aa1b167a7da3602890576094431dd7ee3ba80a7",
  );
  assertEquals(parseView(GENESIS_VIEW).errors, []);
});

Deno.test("every memory line of the reference store parses and renders back to the same bytes", () => {
  const root = referenceFixture();
  const revisions = filesIn(join(root, ".bimri/revisions"), ".md");
  let lines = 0;
  for (const file of [join(root, "bimri.md"), ...revisions]) {
    const view = parseView(Deno.readTextFileSync(file));
    assertEquals(view.errors, [], file);
    for (const { entry, raw } of view.entries) {
      assertEquals(renderEntry(entry), raw, file);
      lines++;
    }
  }
  for (const file of filesIn(join(root, ".bimri/archive"), ".md")) {
    for (const line of splitLines(Deno.readTextFileSync(file))) {
      const m = /^\[ARCHIVED:[0-9-]+\] \[BY:[^\]]+\] \[[a-z]+\] (.*)$/.exec(line);
      if (!m) continue;
      const entry = parseAnyEntry(m[1]);
      assert(entry !== null, line);
      assertEquals(renderEntry(entry), pyStrip(m[1]));
      lines++;
    }
  }
  assert(lines > 5);
});

Deno.test("view grammar rejects lines outside the tier grammar and duplicate keys", () => {
  const line =
    "[R000001-E001] [K:a.b] [I:3] [active] [T:working] [SRC:agent] [F:R000001] [L:R000001] [] Text. -> .bimri/log/R000001.md";
  const withLine = GENESIS_VIEW.replace(
    "<!-- Current work, risks and next actions. Soft target: state.json. -->",
    `<!-- Current work, risks and next actions. Soft target: state.json. -->\n${line}\n${
      line.replace("E001", "E002")
    }`,
  );
  const parsed = parseView(withLine);
  assertEquals(parsed.entries.length, 2);
  assert(parsed.errors.some((e) => e.includes("duplicate memory key: a.b")));
  const bad = parseView(GENESIS_VIEW.replace("## Tier 3", "free text\n## Tier 3"));
  assert(bad.errors.some((e) => e.includes("malformed Tier 2 entry")));
});

Deno.test("splitLines follows Python splitlines", () => {
  assertEquals(splitLines("a\nb\r\nc\rd\u2028e\u0085f\n"), ["a", "b", "c", "d", "e", "f"]);
  assertEquals(splitLines("a\n\n"), ["a", ""]);
  assertEquals(splitLines(""), []);
  assertEquals(pyStrip("\u0085 x \u001f"), "x");
  assertEquals(pyStrip("\ufeffx"), "\ufeffx");
});

Deno.test("authored scalars are checked in the reference's order, with its messages", () => {
  const refused = (fn: () => unknown, pattern: RegExp) => assertThrows(fn, pattern);
  refused(
    () => cleanScalar(" \u0085 ", "memory text", 500),
    /: memory text cannot be empty\.$/,
  );
  // Length counts code points before trimming.
  refused(() => cleanScalar("  abc", "tag", 4), /tag exceeds 4 characters\./);
  assertEquals(cleanScalar("😀".repeat(4), "tag", 4), "😀".repeat(4));
  refused(
    () => cleanScalar("a\tb", "journal text", 99),
    /journal text must be one line without tabs\./,
  );
  refused(
    () => cleanScalar("a\u001fb", "journal text", 99),
    /journal text contains control characters\./,
  );
  refused(
    () => cleanScalar("a\u2028b", "journal text", 99),
    /journal text must not contain Unicode line separators\./,
  );
  // One trailing separator leaves one line for Python's splitlines(); strip() then drops it.
  assertEquals(cleanScalar("abc\u2029", "journal text", 99), "abc");
  assertEquals(cleanScalar("", "question", 10, true), "");
  assertEquals(cleanScalar("\u007fx", "question", 10), "\u007fx");
});

Deno.test("keys and actors are trimmed as Python's strip() trims, then lowercased", () => {
  assertEquals(requireKey(" Launch.Price\u0085"), "launch.price");
  assertEquals(requireActor(" Codex "), "codex");
  assertEquals(requireActor(""), "agent");
  // Python's strip() keeps U+FEFF, which then fails the grammar; JavaScript's trim() would drop it.
  assertThrows(() => requireKey("\ufeffa.b"), /key must use lowercase/);
  assertThrows(() => requireKey("\u001ca.b"), /key contains control characters/);
  assertThrows(() => requireKey("k".repeat(81)), /key exceeds 80 characters/);
  assertEquals(requireRunId(" R000001 "), "R000001");
  assertThrows(() => requireRunId("r000001"), /invalid run ID: r000001/);
  assertThrows(() => requireRunId(" "), /run ID cannot be empty/);
  assertEquals(normalizeTags([" Ops\u001e", "\ufeffx", "ops"]), ["ops", "\ufeffx"]);
});
