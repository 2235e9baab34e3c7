/**
 * Pattern IDs (formats section 2): a new Tier 3 subject is numbered above the
 * pattern_id of every proposal file, closed runs' included, as the reference
 * allocates. The highest proposal pattern number is kept in the derived
 * `.bimri/audit-integrity-patterns.json` (engine/memory/pattern_ids.ts);
 * deleting it, or a proposals folder it no longer describes, gives the same IDs.
 */
import { join } from "node:path";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  copyStore,
  diffTrees,
  expectOk,
  hashTree,
  newSubject,
  startRun,
  tempStore,
} from "../helpers/cli.ts";
import { fingerprint } from "../../engine/store/files.ts";

const CACHE = ".bimri/audit-integrity-patterns.json";

function pattern(root: string, proposal: string): unknown {
  return JSON.parse(Deno.readTextFileSync(join(root, ".bimri/proposals", `${proposal}.json`)))
    .pattern_id;
}

function tier3(run: string, key: string, text: string, fresh = true): string[] {
  return [
    "propose",
    "--run",
    run,
    "--tier",
    "3",
    ...(fresh ? ["--new-subject"] : []),
    "--key",
    key,
    "--text",
    text,
    "--falsifier",
    "never",
  ];
}

/**
 * R000001 proposes a Tier 3 pattern without --new-subject (held as
 * classification-required), syncs and closes; R000002 is left open.
 */
async function closedRunHoldsP0001(): Promise<{ root: string; run: string }> {
  const root = await tempStore();
  const first = await startRun(root, "seed");
  const held = expectOk(
    await bimri(root, tier3(first, "pat.one", "Pattern one.", false)),
    "propose",
  );
  assertEquals(held.stdout, "R000001-Q001\n");
  expectOk(await bimri(root, ["sync", "--run", first]), "sync");
  expectOk(await bimri(root, ["close", "--run", first]), "close");
  assertEquals(pattern(root, "R000001-Q001"), "P0001");
  return { root, run: await startRun(root, "agent") };
}

Deno.test("a pattern held by a closed run's proposal is not reused", async () => {
  const { root, run } = await closedRunHoldsP0001();
  const r = expectOk(await bimri(root, tier3(run, "pat.two", "Pattern two.")), "propose");
  assertEquals(r.stdout, "R000002-Q001\n");
  assertEquals(pattern(root, "R000002-Q001"), "P0002");
  // The engine's write left the record describing the folder as it is now.
  const cache = JSON.parse(Deno.readTextFileSync(join(root, CACHE)));
  assertEquals(
    cache.print,
    fingerprint(Deno.lstatSync(join(root, ".bimri/proposals")), undefined, false),
  );
  assertEquals(cache.highest, 2);
  // While the folder keeps that fingerprint the record is trusted (no proposal is read).
  Deno.writeTextFileSync(join(root, CACHE), JSON.stringify({ ...cache, highest: 41 }));
  const next = expectOk(await bimri(root, tier3(run, "pat.three", "Pattern three.")), "propose");
  assertEquals(pattern(root, next.stdout.trim()), "P0042");
});

Deno.test("deleted, corrupt or stale pattern records give the same IDs as a full read", async () => {
  const { root, run } = await closedRunHoldsP0001();
  expectOk(await bimri(root, tier3(run, "pat.two", "Pattern two.")), "propose");
  // A Tier 2 proposal file moves the record along without any Tier 3 scan.
  expectOk(
    await bimri(root, newSubject(run, "ops.retry", "Retry once.")),
    "tier 2 propose",
  );
  const cache = JSON.parse(Deno.readTextFileSync(join(root, CACHE)));
  assertEquals(
    cache.print,
    fingerprint(Deno.lstatSync(join(root, ".bimri/proposals")), undefined, false),
  );
  const variants: [string, (r: string) => void][] = [
    ["kept", () => {}],
    ["deleted", (r) => Deno.removeSync(join(r, CACHE))],
    ["corrupt", (r) => Deno.writeTextFileSync(join(r, CACHE), "{not json")],
    // A record claiming a lower number for another folder (here: the original's) is ignored.
    [
      "stale",
      (r) => Deno.writeTextFileSync(join(r, CACHE), JSON.stringify({ ...cache, highest: 0 })),
    ],
  ];
  // The original store takes the fast path; its copies (new inodes) read every proposal.
  const stores: string[] = [];
  for (const [name] of variants) stores.push(name === "kept" ? root : await copyStore(root));
  for (const [i, [name, change]] of variants.entries()) {
    const copy = stores[i];
    change(copy);
    const r = expectOk(await bimri(copy, tier3(run, "pat.three", "Pattern three.")), name);
    assertEquals(r.stdout, "R000002-Q003\n", name);
    assertEquals(pattern(copy, "R000002-Q003"), "P0003", name);
    const after = JSON.parse(Deno.readTextFileSync(join(copy, CACHE)));
    assertEquals(after.highest, 3, name);
  }
});

Deno.test("a proposal file written by someone else is honoured on the next allocation", async () => {
  const { root, run } = await closedRunHoldsP0001();
  expectOk(await bimri(root, tier3(run, "pat.two", "Pattern two.")), "propose");
  // Another engine (or a hand) adds a proposal holding P0042 to a closed run:
  // the folder no longer has the recorded fingerprint, so it is read again.
  const dir = join(root, ".bimri/proposals");
  const foreign = JSON.parse(Deno.readTextFileSync(join(dir, "R000001-Q001.json")));
  Deno.writeTextFileSync(
    join(dir, "R000001-Q002.json"),
    JSON.stringify({ ...foreign, proposal_id: "R000001-Q002", pattern_id: "P0042" }, null, 2) +
      "\n",
  );
  const r = expectOk(await bimri(root, tier3(run, "pat.three", "Pattern three.")), "propose");
  assertEquals(pattern(root, r.stdout.trim()), "P0043");
  assertEquals(JSON.parse(Deno.readTextFileSync(join(root, CACHE))).highest, 43);
});

Deno.test("an unreadable proposal file stops a new pattern, as in the reference, and writes nothing", async () => {
  const { root, run } = await closedRunHoldsP0001();
  Deno.writeTextFileSync(join(root, ".bimri/proposals/R000001-Q002.json"), '{"broken"');
  const before = hashTree(root);
  const r = await bimri(root, tier3(run, "pat.two", "Pattern two."));
  assertEquals(r.code, 2);
  assertMatch(r.stderr, /R000001-Q002\.json is unreadable; BIMRI stopped without resetting it/);
  assertEquals(diffTrees(before, hashTree(root)), null);
});
