/**
 * Every read (`get`, `search`, `recall --query`, `--history`) stops when an
 * authority record is damaged, as the reference's do: it would otherwise
 * serve memory from records that no longer prove themselves.
 */
import { join } from "node:path";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { retrieve, seedStore } from "./retrieval_fixture.ts";

const HISTORICAL_READS = [
  ["search", "--query", "checkout"],
  ["recall", "--query", "checkout"],
  ["recall", "--key", "checkout.next-step", "--history"],
  ["get", "--key", "checkout.next-step", "--history"],
  ["get", "--key", "checkout.next-step"],
  ["recall", "--key", "checkout.next-step"],
];

Deno.test("reads refuse past a damaged proposal of an active run and write nothing", async () => {
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
  await Deno.remove(root, { recursive: true });
});

Deno.test("get --key stops once an active run's proposal is edited in place to an unknown engine release", async () => {
  const { root, run } = await seedStore();
  const path = join(root, ".bimri", "proposals", `${run}-Q001.json`);
  const original = JSON.parse(Deno.readTextFileSync(path));
  const get = ["get", "--key", "checkout.next-step"];
  for (const [release, accepted] of [["5.1.1", true], ["5.1.0", true], ["5.1.3", false]] as const) {
    const edited = { ...original, preflight_receipt: { ...original.preflight_receipt } };
    edited.preflight_receipt.engine_release = release;
    // Rewritten in place, as an editor or script saves it: the folder itself does not change.
    Deno.writeTextFileSync(path, JSON.stringify(edited, null, 2) + "\n");
    const read = await retrieve(root, get);
    if (accepted) {
      assertEquals(read.code, 0, `${release}: ${read.stderr}`);
      assertMatch(read.stdout, /^HOT\tcheckout\.next-step\t/);
    } else {
      assertEquals([read.code, read.stdout], [2, ""], release);
      assertMatch(read.stderr, /authority recovery is required: proposal .*engine release/);
    }
  }
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
