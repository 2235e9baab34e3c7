/**
 * Historical reads (`search`, `recall --query`, `--history`) stop when an
 * authority record is damaged, as the reference's do: they would otherwise
 * serve held candidates and history read from records that no longer prove
 * themselves. A current-only exact read serves the accepted head alone.
 */
import { join } from "node:path";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { retrieve, seedStore } from "./retrieval_fixture.ts";

const HISTORICAL_READS = [
  ["search", "--query", "checkout"],
  ["recall", "--query", "checkout"],
  ["recall", "--key", "checkout.next-step", "--history"],
  ["get", "--key", "checkout.next-step", "--history"],
];

Deno.test("historical reads refuse past a damaged proposal of an active run and write nothing", async () => {
  const { root, run } = await seedStore();
  for (const args of HISTORICAL_READS) {
    assertEquals((await retrieve(root, args)).code, 0, args.join(" "));
  }
  Deno.writeTextFileSync(join(root, ".bimri", "proposals", `${run}-Q003.json`), "{ broken");
  for (const args of HISTORICAL_READS) {
    const refused = await retrieve(root, args);
    assertEquals(refused.code, 2, args.join(" "));
    assertEquals(refused.stdout, "");
    assertMatch(
      refused.stderr,
      new RegExp(
        `^BIMRI ERROR: recall stopped because authority recovery is required: proposal ${run}-Q003 `,
      ),
    );
  }
  const current = await retrieve(root, ["get", "--key", "checkout.next-step"]);
  assertEquals(current.code, 0, current.stderr);
  assertMatch(current.stdout, /^HOT\tcheckout\.next-step\t/);
  await Deno.remove(root, { recursive: true });
});

Deno.test("historical reads refuse when a closed run's decision record is missing", async () => {
  const { root, seed } = await seedStore();
  Deno.removeSync(join(root, ".bimri", "decisions", `${seed}-Q002.json`));
  const refused = await retrieve(root, ["search", "--query", "checkout"]);
  assertEquals(refused.code, 2);
  assertMatch(refused.stderr, new RegExp(`decision ${seed}-Q002 `));
  await Deno.remove(root, { recursive: true });
});
