/** Damage kinds 1-3 (truncation, invalid JSON, wrong ID) with the full degraded-mode checks. */
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, startRun } from "../helpers/cli.ts";
import { recordFile } from "../helpers/healthy_store.ts";
import { copyStore } from "../helpers/healthy_store.ts";
import { damageRoundTrip, DAMAGES, healthy } from "../helpers/damage_cases.ts";

for (const d of DAMAGES.slice(0, 3)) {
  Deno.test(`damage: ${d.name} is detected, blocks canonical writes, and round-trips`, async () => {
    await damageRoundTrip(d);
  });
}

Deno.test("a failed resolution is reported at start and pauses canonical writes", async () => {
  const s = await healthy();
  const root = await copyStore(s.root);
  const run = await startRun(root, "tester");
  const resolution = {
    authority: "human-asserted",
    bimri_version: "5.1.0",
    by: "user",
    choice: "current",
    conflict_id: "C000001",
    error: "injected failure",
    failed_at: "2026-12-02T12:59:42Z",
    intended_revision_after: 3,
    proposal_ids: [`${s.loserRun}-Q001`],
    revision_before: 3,
    started_at: "2026-12-02T12:59:42Z",
    status: "failed",
  };
  Deno.writeTextFileSync(recordFile(root, "resolutions", "C000001"), JSON.stringify(resolution));
  const start = await bimri(root, ["start", "--actor", "other"]);
  assertMatch(
    start.stdout,
    /resolution C000001 \(\.bimri\/resolutions\/C000001\.json\): resolution status is failed; explicit retry is required\./,
  );
  const sync = await bimri(root, ["sync", "--run", run]);
  assertEquals(sync.code, 2);
});
