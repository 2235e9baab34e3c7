/**
 * Issue 11: `.bimri/audit-integrity-state.json` marks the state.json bimri
 * itself wrote, so a command neither re-validates its entries nor
 * re-serializes an unchanged `cold_current`. It is derived: without it every
 * store file comes out byte for byte the same, and a state.json changed by
 * anyone else is validated in full (and refused when broken) although the
 * mark is present.
 */
import { join } from "node:path";
import { canonicalJson } from "../../engine/store/canonical_json.ts";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
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

const MARK = ".bimri/audit-integrity-state.json";
const LONG = "x".repeat(300);
const ENV = { BIMRI_NOW: "2026-03-04T05:06:07Z" };

function statePath(root: string): string {
  return join(root, ".bimri/state.json");
}

function readState(root: string): Record<string, unknown> & {
  cold_current: Record<string, { line_hash: string }>;
} {
  return JSON.parse(Deno.readTextFileSync(statePath(root)));
}

/** A store whose hot view overflowed once, so one subject is cold; its run stays open. */
async function storeWithColdSubject(): Promise<{ root: string; run: string }> {
  const root = await tempStore();
  const run = await startRun(root);
  const propose = async (i: number, importance: number) =>
    expectOk(
      await bimri(
        root,
        newSubject(run, `p.s${i}`, `S${i} ${LONG}`, ["--importance", String(importance)]),
        { env: ENV },
      ),
      "propose",
    );
  for (const [i, importance] of [4, 1, 5, 3].entries()) await propose(i, importance);
  expectOk(await bimri(root, ["sync", "--run", run], { env: ENV }), "sync");
  const state = readState(root);
  state.hot_max_bytes = Deno.readFileSync(join(root, "bimri.md")).length + 100;
  Deno.writeTextFileSync(statePath(root), canonicalJson(state as never));
  await propose(4, 2);
  expectOk(await bimri(root, ["sync", "--run", run], { env: ENV }), "sync");
  assertEquals(Object.keys(readState(root).cold_current), ["p.s1"]);
  return { root, run };
}

/** Every file under `.bimri/` and the view, without bimri's derived `audit-integrity-*` files. */
function storeFiles(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [path, hash] of hashTree(root)) {
    if (!path.includes("audit-integrity-")) out.set(path, hash);
  }
  return out;
}

Deno.test("with or without the state mark, every command writes the same canonical bytes", async () => {
  const { root, run } = await storeWithColdSubject();
  const marked = await copyStore(root);
  const unmarked = await copyStore(root);
  const steps = [
    ["journal", "--run", run, "--text", "Checked the retry path."],
    ["propose", "--run", run, "--key", "p.s0", "--text", `S0 updated ${LONG}`],
    ["sync", "--run", run],
    ["propose", "--run", run, "--key", "p.s1", "--text", `S1 back from cold ${LONG}`],
    ["close", "--run", run, "--outcome", "success", "--summary", "Done."],
  ];
  for (const step of steps) {
    const a = await bimri(marked, step, { env: ENV });
    assert(
      Deno.statSync(join(marked, MARK)).isFile,
      `${step[0]} left the mark of its own write`,
    );
    Deno.removeSync(join(unmarked, MARK), { recursive: true });
    const b = await bimri(unmarked, step, { env: ENV });
    assertEquals(a.code, 0, `${step[0]}: ${a.stderr}`);
    assertEquals(b, a, `${step[0]} answers the same without the mark`);
    const text = Deno.readTextFileSync(statePath(marked));
    assertEquals(text, canonicalJson(JSON.parse(text)), `${step[0]} wrote canonical state`);
    assertEquals(storeFiles(marked), storeFiles(unmarked), `${step[0]} wrote the same files`);
  }
  // A corrupt mark is no mark.
  Deno.writeTextFileSync(join(unmarked, MARK), "{not json");
  assertEquals(
    await bimri(unmarked, ["get", "--key", "p.s1"]),
    await bimri(marked, ["get", "--key", "p.s1"]),
  );
});

Deno.test("a state.json changed behind bimri's back is validated in full despite the mark", async () => {
  const { root, run } = await storeWithColdSubject();
  expectOk(await bimri(root, ["journal", "--run", run, "--text", "Marked."]), "journal");
  assert(Deno.statSync(join(root, MARK)).isFile);

  // Same size, edited in place (inode kept): one hex digit of a cold line hash becomes "z".
  const text = Deno.readTextFileSync(statePath(root));
  const hash = readState(root).cold_current["p.s1"].line_hash;
  const broken = text.replace(hash, "z" + hash.slice(1));
  assertEquals(broken.length, text.length);
  const file = Deno.openSync(statePath(root), { write: true });
  file.writeSync(new TextEncoder().encode(broken));
  file.close();

  const before = hashTree(root);
  const refusedWithMark = await bimri(root, ["journal", "--run", run, "--text", "Refused."]);
  assertEquals(refusedWithMark.code, 2, refusedWithMark.stderr);
  assertMatch(
    refusedWithMark.stderr,
    /state\.json is invalid \(cold_current\.p\.s1 is malformed\)/,
  );
  assertEquals(diffTrees(before, hashTree(root)), null, "a refused command writes nothing");
  const mark = Deno.readFileSync(join(root, MARK));
  Deno.removeSync(join(root, MARK));
  assertEquals(await bimri(root, ["journal", "--run", run, "--text", "Refused."]), refusedWithMark);
  Deno.writeFileSync(join(root, MARK), mark);

  // Replaced through a rename (a new inode, as editors and the reference write).
  Deno.writeTextFileSync(statePath(root) + ".new", text.replace(hash, hash.slice(1)));
  Deno.renameSync(statePath(root) + ".new", statePath(root));
  const refusedRenamed = await bimri(root, ["get", "--key", "p.s1"]);
  assertEquals(refusedRenamed.code, 2, refusedRenamed.stderr);
  assertMatch(refusedRenamed.stderr, /cold_current\.p\.s1 is malformed/);
});
