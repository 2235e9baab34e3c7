/**
 * doctor / validate: the read-only audit writes nothing at all (not even on a
 * folder without a store), failures exit 1 with one line per error, warnings
 * keep PASSED, and the v5.0.2-era shapes stay valid.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree, tempStore } from "../helpers/cli.ts";
import { buildHealthyStore, copyStore, recordFile } from "../helpers/healthy_store.ts";

const healthy = buildHealthyStore();

Deno.test("read-only doctor on a folder without a store creates nothing", async () => {
  const root = await tempStore();
  const r = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(r.code, 1);
  assertEquals(
    r.stdout,
    "BIMRI doctor (read-only): FAILED\n  - existing .bimri directory is missing or unsafe.\n",
  );
  assertEquals([...Deno.readDirSync(root)].length, 0);
});

Deno.test("read-only doctor passes a healthy store and writes nothing; validate is an alias", async () => {
  const root = await copyStore((await healthy).root);
  const before = hashTree(root);
  const r = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(r.code, 0, r.stdout);
  assertEquals(
    r.stdout,
    "BIMRI doctor (read-only): PASSED\n  - index is missing; run index to rebuild it.\n",
  );
  assertEquals(diffTrees(before, hashTree(root)), null);
  const v = await bimri(root, ["--json", "validate", "--read-only"]);
  const doc = JSON.parse(v.stdout);
  assertEquals(doc.passed, true);
  assertEquals(doc.read_only, true);
  assertEquals(doc.errors, []);
  assertEquals(diffTrees(before, hashTree(root)), null);
});

Deno.test("doctor fails on damaged state, head and index, and warns on orphans and litter", async () => {
  const base = (await healthy).root;
  const state = await copyStore(base);
  Deno.writeTextFileSync(join(state, ".bimri/state.json"), "{ not json");
  const before = hashTree(state);
  const s = await bimri(state, ["doctor", "--read-only"]);
  assertEquals(s.code, 1);
  assertMatch(s.stdout, /^ {2}- state\.json is not valid JSON/m);
  assertEquals(diffTrees(before, hashTree(state)), null);
  const repair = await bimri(state, ["doctor"]);
  assertEquals(repair.code, 1, "a damaged state stays a failed audit, never a reset");
  assertEquals(Deno.readTextFileSync(join(state, ".bimri/state.json")), "{ not json");

  const head = await copyStore(base);
  const stateDoc = JSON.parse(Deno.readTextFileSync(join(head, ".bimri/state.json")));
  const headFile = join(
    head,
    ".bimri/revisions",
    `V${String(stateDoc.head_revision).padStart(6, "0")}.md`,
  );
  Deno.writeTextFileSync(headFile, Deno.readTextFileSync(headFile).replace("Winner.", "Changed."));
  Deno.writeTextFileSync(join(head, ".bimri/index.tsv"), "only\tthree\tcolumns\n");
  Deno.writeTextFileSync(join(head, ".bimri/revisions/V000099.md"), "# orphan\n");
  Deno.writeTextFileSync(join(head, ".bimri/recovery/.bimri-tmp-abc"), "");
  const h = await bimri(head, ["doctor", "--read-only"]);
  assertEquals(h.code, 1);
  assertMatch(h.stdout, /^ {2}- accepted head revision does not match state\.head_hash\.$/m);
  assertMatch(h.stdout, /^ {2}- index\.tsv has rows without 8 columns/m);
  // Warnings (an orphan revision, litter) are not listed under FAILED; --json carries them.
  assertNotMatch(h.stdout, /is above the accepted head|abandoned temporary file/);
  const hj = JSON.parse((await bimri(head, ["doctor", "--read-only", "--json"])).stdout);
  assertEquals(
    hj.warnings.some((w: string) => /^revision V000099 is above the accepted head/.test(w)),
    true,
  );
  assertEquals(
    hj.warnings.includes("abandoned temporary file .bimri/recovery/.bimri-tmp-abc."),
    true,
  );
});

Deno.test("warnings keep PASSED; doctor rebuilds the index only after a clean audit", async () => {
  const root = await copyStore((await healthy).root);
  // A well-formed revision above the head: what a crash before the state update leaves.
  Deno.copyFileSync(
    join(root, ".bimri/revisions/V000000.md"),
    join(root, ".bimri/revisions/V000099.md"),
  );
  const r = await bimri(root, ["doctor"]);
  assertEquals(r.code, 0, r.stdout);
  assertMatch(r.stdout, /^BIMRI doctor: PASSED$/m);
  assertMatch(r.stdout, /V000099/);
  assert(Deno.readTextFileSync(join(root, ".bimri/index.tsv")).startsWith("id\tkey\t"));
  const broken = await copyStore(root);
  Deno.removeSync(join(broken, ".bimri/index.tsv"));
  Deno.writeTextFileSync(recordFile(broken, "conflicts", "C000001"), "{}");
  const f = await bimri(broken, ["doctor"]);
  assertEquals(f.code, 1);
  assertMatch(f.stdout, /^BIMRI doctor: FAILED$/m);
  assert(!Deno.statSync(join(broken, ".bimri")).isFile);
  let indexExists = true;
  try {
    Deno.statSync(join(broken, ".bimri/index.tsv"));
  } catch {
    indexExists = false;
  }
  assertEquals(indexExists, false, "no index rebuild after a failed audit");
});

Deno.test("version-aware rules: v5.0.2 records keep their contract, a v5.1.0 record must be complete", async () => {
  const s = await healthy;
  const root = await copyStore(s.root);
  const decision = recordFile(root, "decisions", `${s.closedRun}-Q001`);
  const value = JSON.parse(Deno.readTextFileSync(decision));
  Deno.writeTextFileSync(
    decision,
    JSON.stringify({ ...value, bimri_version: "5.0.2" }, null, 2) + "\n",
  );
  const ok = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(ok.code, 0, ok.stdout);
  const proposal = recordFile(root, "proposals", `${s.closedRun}-Q001`);
  const p = JSON.parse(Deno.readTextFileSync(proposal));
  delete p.preflight_receipt;
  Deno.writeTextFileSync(proposal, JSON.stringify(p, null, 2) + "\n");
  const bad = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(bad.code, 1);
  assertMatch(bad.stdout, /proposal R000001-Q001 .*missing field preflight_receipt/);
  p.bimri_version = "5.0.2";
  Deno.writeTextFileSync(proposal, JSON.stringify(p, null, 2) + "\n");
  const old = await bimri(root, ["doctor", "--read-only"]);
  assert(!old.stdout.includes("preflight_receipt"), old.stdout);
});
