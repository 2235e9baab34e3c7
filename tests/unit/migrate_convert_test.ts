import { assertEquals, assertMatch, assertThrows } from "../helpers/assert.ts";
import { convertLegacy, parseLegacy } from "../../engine/migrate/legacy_convert.ts";
import { convertV4View } from "../../engine/migrate/v4.ts";
import {
  normalizeMetadata,
  overflowVector,
  selectMetadataNormalization,
} from "../../engine/migrate/v50.ts";
import { activatedStateObject, inventoryDifferences } from "../../engine/migrate/common.ts";
import { parseView } from "../../engine/model/hot.ts";

const SOURCE = `<!-- BIMRI v3.0 | Sessions: 9 -->
# BIMRI: Memory File
## Tier 1: Core Intelligence
* First fact.
[ID:T2-20260101-07] [IMP:4] [CREATED:2026-01-01] [SESSION:1] [LAST_USED:2026-01-02] [LAST_USED_SESSION:2] [TAGS:B,a,b] [W:4.0]
Promoted claim.
## Tier 2: Active Context
[IMPORTANCE:2] [TIMESTAMP:2026-01-03] [TAGS:] [WEIGHT:1.0]
A v1-style entry.
## Tier 3: Pattern Recognition
[PATTERN] [CONFIDENCE:established] [OBSERVATIONS:6] [TAGS:x]
A pattern.
`;

Deno.test("legacy parsing assigns deterministic source IDs and keys", () => {
  const parsed = parseLegacy(SOURCE, "test");
  assertEquals(parsed.version, 3);
  assertEquals(parsed.sessions, 9);
  assertEquals(parsed.claims.map((c) => c.source_id), [
    "T1-0001",
    "T2-20260101-07",
    "T2-LEGACY-0001",
    "PATTERN-0001",
  ]);
  assertEquals(parsed.claims[1].tags, ["b", "a"]);
  const first = convertLegacy(parsed);
  const second = convertLegacy(parseLegacy(SOURCE, "test"));
  assertEquals(first, second);
  assertEquals(first.idMap.map((m) => m.target_key), [
    "legacy.v3.t1-0001",
    "legacy.v3.t2-20260101-07",
    "legacy.v3.t2-legacy-0001",
    "legacy.v3.pattern-0001",
  ]);
  assertEquals(parseView(first.text).errors, []);
  assertMatch(first.text, /^\[R0-E4\] \[K:legacy\.v3\.pattern-0001\] \[I:3\] \[watch\]/m);
});

Deno.test("legacy parsing refuses invalid dates and stray content", () => {
  assertThrows(
    () => parseLegacy(SOURCE.replace("2026-01-03", "2026-02-30"), "t"),
    /date is invalid/,
  );
  assertThrows(() => parseLegacy("stray\n" + SOURCE, "t"), /outside a tier/);
});

Deno.test("v4 conversion adds keys, maps decision to watch and keeps unknown lines", () => {
  const text = [
    "<!-- BIMRI v4 | x -->",
    "<!-- Engine: y -->",
    "## Tier 2: Active Context",
    "[R12-E3] [I:2] [decision] [F:R1] [L:R12] [Ops] Keep it. -> .bimri/log/R012.md",
    "## Tier 3: Pattern Recognition",
    "[P3] [emerging] [obs:1] [ev:R1-E1] H. | Falsify: F.",
  ].join("\n");
  assertEquals(convertV4View(text).split("\n"), [
    "<!-- BIMRI v5.0.2 | Generated view. Do not edit directly. -->",
    "<!-- Full history: .bimri/log/ | Revisions: .bimri/revisions/ -->",
    "## Tier 2: Active Context",
    "[R12-E3] [K:legacy.r12-e3] [I:2] [watch] [T:working] [SRC:legacy] [F:R1] [L:R12] [ops] Keep it. -> .bimri/log/R012.md",
    "## Tier 3: Pattern Recognition",
    "[P3] [K:legacy.pattern-p3] [emerging] [obs:1] [ev:R1-E1] H. | Falsify: F.",
    "",
  ]);
});

Deno.test("v5.0 metadata normalization rewrites only exact header lines", () => {
  const old = "<!-- BIMRI v5 | Generated view. Do not edit directly. -->\r\n" +
    "<!-- Evidence-backed patterns. Cap: 8. -->\nkeep\n";
  assertEquals(
    normalizeMetadata(old, false),
    "<!-- BIMRI v5.0.2 | Generated view. Do not edit directly. -->\r\n" +
      "<!-- Evidence-backed patterns. Capacity: state.json. -->\nkeep\n",
  );
  assertEquals(
    selectMetadataNormalization("nothing historical\n", {
      entry_max_chars: 500,
      hot_max_bytes: 10,
    }),
    null,
  );
  assertEquals(overflowVector("broken", { entry_max_chars: 500, hot_max_bytes: 10 }), null);
});

Deno.test("activated state keeps every field, adds lifecycle fields, refuses missing ones", () => {
  const raw = { bimri_version: "5.0.2", custom: 1 } as Record<string, unknown>;
  assertThrows(() => activatedStateObject(raw as never), /missing required v5 field/);
  assertEquals(
    inventoryDifferences(
      [{ path: "a", type: "file", sha256: "1" }, { path: "b", type: "directory" }],
      [{ path: "a", type: "file", sha256: "2" }, { path: "c", type: "symlink", target: "x" }],
    ),
    ["a", "b", "c"],
  );
});
