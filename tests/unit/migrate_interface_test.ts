import { join } from "node:path";
import { assert, assertEquals, assertThrows } from "../helpers/assert.ts";
import { diffTrees, hashTree, tempStore } from "../helpers/cli.ts";
import { copyFixture } from "../fixtures/fixtures.ts";
import { detectStoreFormat, migrateForInstall } from "../../engine/migrate/mod.ts";
import { loadHeadViews } from "../../engine/store/store.ts";

// The engine parses views with hot.ts, which commands/run.ts loads before a verb runs.
await loadHeadViews();

Deno.test("detectStoreFormat names every generation without writing", async () => {
  const cases: Array<[string, string]> = [
    ["reference-v5.0.2-populated", "5.0.2"],
    ["v5.0-stock", "5.0"],
    ["v5.0.1-custom", "5.0.1"],
    ["v4-store", "v4"],
    ["legacy-v3", "legacy"],
    ["legacy-v1", "legacy"],
  ];
  for (const [fixture, format] of cases) {
    const root = await copyFixture(fixture);
    const before = hashTree(root);
    assertEquals(detectStoreFormat(root).format, format, fixture);
    assertEquals(diffTrees(before, hashTree(root)), null);
  }
  assertEquals(detectStoreFormat(await tempStore()).format, "empty");
});

Deno.test("the installer interface refuses a 5.0.x activation without quiescence, writing nothing", async () => {
  for (const fixture of ["reference-v5.0.2-populated", "v5.0-stock"]) {
    const root = await copyFixture(fixture);
    const before = hashTree(root);
    assertThrows(() => migrateForInstall(root, { quiescent: false }), /quiescent/);
    assertEquals(diffTrees(before, hashTree(root)), null, fixture);
  }
});

Deno.test("the installer interface activates v5.0.2 and reports the receipt fields", async () => {
  const root = await copyFixture("reference-v5.0.2-populated");
  const receipt = migrateForInstall(root, { quiescent: true });
  assertEquals(receipt.mode, "lossless-authority-activation");
  assertEquals(receipt.detected_format, "5.0.2");
  assertEquals(receipt.validation, "PASSED");
  assert(receipt.backup !== null && receipt.backup.endsWith("/state-v5.0.2-exact.json"));
  assert(Deno.statSync(join(root, receipt.backup)).isFile);
  assertEquals(detectStoreFormat(root).format, "5.1.0");
  const again = migrateForInstall(root, { quiescent: true });
  assertEquals(again.mode, "verified");
});

Deno.test("the receipt names inherited overflow keys for later compression", async () => {
  const root = await copyFixture("legacy-v3");
  const receipt = migrateForInstall(root, { quiescent: true });
  assertEquals(receipt.mode, "legacy-to-v5");
  assertEquals(receipt.inherited_overflow, ["legacy.v3.t1-0003"]);
  assertEquals(receipt.imported, { tier1: 3, tier2: 3, tier3: 0 });
  assertEquals(receipt.converted_patterns, 1);
  assertEquals(receipt.migration_record, ".bimri/migrations/legacy-to-v5.json");
  assertEquals(receipt.validation, "PASSED");
});

Deno.test("a customized v5.0 profile is kept whole", async () => {
  const root = await copyFixture("v5.0-stock");
  const statePath = join(root, ".bimri/state.json");
  const state = JSON.parse(Deno.readTextFileSync(statePath));
  state.tier1_max = 13;
  Deno.writeTextFileSync(statePath, JSON.stringify(state, null, 2) + "\n");
  const receipt = migrateForInstall(root, { quiescent: true });
  assert(
    receipt.lines.includes(
      "Memory: upgraded v5.0 to v5.1.0; custom limits preserved (T1/T2/T3 13/20/8, entry 500 chars, 16,384 bytes).",
    ),
    receipt.lines.join("\n"),
  );
  const after = JSON.parse(Deno.readTextFileSync(statePath));
  assertEquals([after.tier1_max, after.tier2_max, after.hot_max_bytes], [13, 20, 16384]);
});
