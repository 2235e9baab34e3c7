/**
 * `maintain`: the retention forecast line (Python's percentage rounding), the
 * pressure advice, and the index rebuild it ends with.
 */
import { join } from "node:path";
import { assertEquals } from "../helpers/assert.ts";
import { bimri, tempStore } from "../helpers/cli.ts";

Deno.test("maintain prints the forecast, the advice and the index rebuild; a tie rounds to even", async () => {
  const root = await tempStore("bimri-maintain-");
  const fresh = await bimri(root, ["maintain"]);
  assertEquals(fresh.code, 0, fresh.stderr);
  assertEquals(
    fresh.stdout,
    "BIMRI retention forecast: hot bytes 473/49152 (1%); cold current 0.\n" +
      "Residency is healthy; no pressure action is needed.\n" +
      "BIMRI: index rebuilt with 0 rows.\n",
  );
  // 473 of 94,600 bytes is exactly 0.5%: Python's ".0%" prints 0%, not 1%.
  const statePath = join(root, ".bimri", "state.json");
  const state = JSON.parse(Deno.readTextFileSync(statePath));
  state.hot_max_bytes = 94600;
  Deno.writeTextFileSync(statePath, JSON.stringify(state, null, 2) + "\n");
  const tie = await bimri(root, ["maintain"]);
  assertEquals(tie.code, 0, tie.stderr);
  assertEquals(
    tie.stdout.split("\n")[0],
    "BIMRI retention forecast: hot bytes 473/94600 (0%); cold current 0.",
  );
});
