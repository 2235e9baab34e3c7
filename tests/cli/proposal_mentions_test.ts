/**
 * Proposal-ID allocation counts every `<run>-Q<nnn>` named in a conflict or
 * resolution file (formats section 2, as the reference reads them), through
 * the derived `.bimri/audit-integrity-mentions.json`: deleting it changes no
 * number, bimri's own conflict writes move it along, and an outside change
 * to either folder is read in full.
 */
import { join } from "node:path";
import { assertEquals } from "../helpers/assert.ts";
import { bimri, expectOk as ok, newSubject, startRun, tempStore } from "../helpers/cli.ts";

const CACHE = join(".bimri", "audit-integrity-mentions.json");

function cached(root: string): Record<string, number> | null {
  try {
    return JSON.parse(Deno.readTextFileSync(join(root, CACHE))).highest;
  } catch {
    return null;
  }
}

async function propose(root: string, run: string, key: string): Promise<string> {
  return ok(await bimri(root, newSubject(run, key, "Another subject.")), key).stdout.trim();
}

/** Raises one stale-base conflict on `key` whose live line names `mention`. */
async function conflictNaming(root: string, key: string, mention: string): Promise<void> {
  const seed = await startRun(root, "seed");
  ok(await bimri(root, newSubject(seed, key, "Seed.")), "seed");
  ok(await bimri(root, ["close", "--run", seed]), "seed close");
  const [w, l] = [await startRun(root, "w"), await startRun(root, "l")];
  const text = `Winner; follow up in ${mention}.`;
  ok(await bimri(root, ["propose", "--run", w, "--key", key, "--text", text]), "w");
  ok(await bimri(root, ["propose", "--run", l, "--key", key, "--text", "Loser."]), "l");
  ok(await bimri(root, ["close", "--run", w]), "w close");
  ok(await bimri(root, ["close", "--run", l]), "l close");
}

Deno.test("a proposal number named in a conflict is skipped; the derived record is moved along by conflict writes and can be deleted", async () => {
  const root = await tempStore();
  const keeper = await startRun(root, "keeper");
  assertEquals(keeper, "R000001");
  assertEquals(await propose(root, keeper, "a.one"), "R000001-Q001");

  await conflictNaming(root, "k.first", "R000001-Q009");
  assertEquals(await propose(root, keeper, "a.two"), "R000001-Q010");
  // That propose read both folders in full and recorded what it found.
  assertEquals(cached(root)?.R000001, 9);

  // A conflict bimri writes moves the record along without a full read.
  await conflictNaming(root, "k.second", "R000001-Q020");
  assertEquals(cached(root)?.R000001, 20);
  assertEquals(await propose(root, keeper, "a.three"), "R000001-Q021");

  // Derived: without the record the numbers are the same.
  Deno.removeSync(join(root, CACHE));
  assertEquals(await propose(root, keeper, "a.four"), "R000001-Q022");

  // An outside file in resolutions/ (read like the reference's *.json glob) is seen at once.
  Deno.writeTextFileSync(join(root, ".bimri", "resolutions", "note.json"), '"R000001-Q040"\n');
  assertEquals(await propose(root, keeper, "a.five"), "R000001-Q041");
});

Deno.test("a refused propose writes no mentions record", async () => {
  const root = await tempStore();
  const keeper = await startRun(root, "keeper");
  await conflictNaming(root, "k.first", "R000001-Q009");
  Deno.removeSync(join(root, CACHE));
  const refused = await bimri(root, [
    "propose",
    "--run",
    keeper,
    "--key",
    "Bad Key",
    "--text",
    "x",
  ]);
  assertEquals(refused.code, 2);
  assertEquals(cached(root), null);
  assertEquals(await propose(root, keeper, "a.one"), "R000001-Q010");
  assertEquals(cached(root)?.R000001, 9);
});
