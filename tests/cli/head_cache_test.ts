/**
 * Issue 11: `.bimri/audit-integrity-head.json` lets a command skip hashing an
 * unchanged head revision. It is derived: deleting or corrupting it changes no
 * answer, a refused command never writes it, and a head edited in place is
 * refused exactly as without it.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, expectOk, hashTree, startRun, tempStore } from "../helpers/cli.ts";

const HEAD_CACHE = ".bimri/audit-integrity-head.json";

/** Proposes a new Tier 2 subject in `run` and syncs it in. */
async function addSubject(root: string, run: string, key: string, text: string): Promise<void> {
  const args = ["propose", "--run", run, "--tier", "2", "--new-subject", "--key", key];
  expectOk(await bimri(root, [...args, "--text", text]), "propose");
  expectOk(await bimri(root, ["sync", "--run", run]), "sync");
}

async function storeWithOneSubject(): Promise<{ root: string; run: string }> {
  const root = await tempStore();
  const run = await startRun(root, "agent");
  await addSubject(root, run, "ops.retry", "Keep the retry path idempotent.");
  return { root, run };
}

/** Edits the head revision in place (same length) and expects each command refused. */
async function expectEditedHeadRefused(root: string, commands: string[][]): Promise<void> {
  const path = headPath(root);
  const text = Deno.readTextFileSync(path);
  const tampered = text.replace("idempotent", "IDEMPOTENT");
  assert(tampered !== text && tampered.length === text.length);
  Deno.writeTextFileSync(path, tampered);
  for (const args of commands) {
    const result = await bimri(root, args);
    assertEquals(result.code, 2, args.join(" "));
    assertMatch(result.stderr, /state head hash does not match the accepted head revision/);
  }
}

function headPath(root: string): string {
  const state = JSON.parse(Deno.readTextFileSync(join(root, ".bimri/state.json")));
  return join(root, ".bimri/revisions", `V${String(state.head_revision).padStart(6, "0")}.md`);
}

Deno.test("the head check is recorded with a state write and answers stay the same without it", async () => {
  const { root, run } = await storeWithOneSubject();
  // sync moved the head; the next state write (journal does not read the head) records it.
  expectOk(await bimri(root, ["close", "--run", run, "--outcome", "success"]), "close");
  const check = JSON.parse(Deno.readTextFileSync(join(root, HEAD_CACHE)));
  const state = JSON.parse(Deno.readTextFileSync(join(root, ".bimri/state.json")));
  assertEquals([check.revision, check.hash], [state.head_revision, state.head_hash]);

  const withCache = await bimri(root, ["get", "--key", "ops.retry"]);
  Deno.removeSync(join(root, HEAD_CACHE));
  const without = await bimri(root, ["get", "--key", "ops.retry"]);
  assertEquals(without, withCache);
  Deno.writeTextFileSync(join(root, HEAD_CACHE), "{not json");
  assertEquals(await bimri(root, ["get", "--key", "ops.retry"]), withCache);
});

Deno.test("a refused command and a read never write the head check", async () => {
  const { root, run } = await storeWithOneSubject();
  Deno.removeSync(join(root, HEAD_CACHE));
  const before = hashTree(root);
  const refused = await bimri(root, ["propose", "--run", run, "--key", "ops.retry", "--text", ""]);
  assertEquals(refused.code, 2);
  expectOk(await bimri(root, ["recall", "--query", "retry"]), "recall");
  assertEquals(diffTrees(before, hashTree(root)), null);
});

Deno.test("a head revision edited in place is refused although a head check was recorded", async () => {
  const { root, run } = await storeWithOneSubject();
  expectOk(await bimri(root, ["journal", "--run", run, "--text", "touch state"]), "journal");
  await startRun(root, "second"); // loads the head under the lock and records the check
  assert(Deno.statSync(join(root, HEAD_CACHE)).isFile, "the head check exists");
  await expectEditedHeadRefused(root, [["get", "--key", "ops.retry"], ["sync", "--run", run]]);
});

Deno.test("a commit records the check of the revision it wrote, and an edit after it is still refused", async () => {
  const { root, run } = await storeWithOneSubject();
  // sync committed: the head check already names the new head, without hashing it again.
  const check = JSON.parse(Deno.readTextFileSync(join(root, HEAD_CACHE)));
  const state = JSON.parse(Deno.readTextFileSync(join(root, ".bimri/state.json")));
  assertEquals([check.revision, check.hash], [state.head_revision, state.head_hash]);
  await expectEditedHeadRefused(root, [["get", "--key", "ops.retry"], ["close", "--run", run]]);
});

Deno.test("start reports the head's tiers from the head check exactly as from the head itself", async () => {
  const { root, run } = await storeWithOneSubject();
  const tiers = async (actor: string) => {
    const result = await bimri(root, ["start", "--actor", actor, "--json"]);
    assertEquals(result.code, 0, result.stderr);
    return JSON.parse(result.stdout).tiers;
  };
  // sync's commit recorded the new head's facts together with its check.
  const check = JSON.parse(Deno.readTextFileSync(join(root, HEAD_CACHE)));
  const fromCheck = await tiers("first");
  assertEquals(fromCheck, check.facts.tiers);
  assertEquals(fromCheck, [0, 1, 0]);
  assertEquals(check.facts.tier2Runs, [run]);
  Deno.removeSync(join(root, HEAD_CACHE));
  assertEquals(await tiers("second"), fromCheck);
  Deno.writeTextFileSync(join(root, HEAD_CACHE), JSON.stringify({ ...check, facts: { tiers: 3 } }));
  assertEquals(await tiers("third"), fromCheck);
  // A second subject moves the head; the facts recorded with it follow.
  await addSubject(root, run, "ops.backup", "Verify the nightly backup.");
  assertEquals(await tiers("fourth"), [0, 2, 0]);
  Deno.removeSync(join(root, HEAD_CACHE));
  assertEquals(await tiers("fifth"), [0, 2, 0]);
});

Deno.test("the brief lists the head's validation errors under the state's entry cap, cached or not", async () => {
  const { root } = await storeWithOneSubject();
  const brief = async (actor: string) => {
    const result = await bimri(root, ["start", "--actor", actor]);
    assertEquals(result.code, 0, result.stderr);
    return result.stdout;
  };
  const setCap = (cap: number) => {
    const path = join(root, ".bimri/state.json");
    const state = JSON.parse(Deno.readTextFileSync(path));
    state.entry_max_chars = cap;
    Deno.writeTextFileSync(path, JSON.stringify(state, null, 2) + "\n");
  };
  assert(!(await brief("first")).includes("VALIDATION NEEDED"));
  // A cap below the stored text (a hand-edited state): the reference's brief block.
  setCap(10);
  const expected =
    /^VALIDATION NEEDED:\n {2}- entry R000001-E001 text exceeds 10 characters\nRun handle: /m;
  assertMatch(await brief("second"), expected);
  assertMatch(await brief("third"), expected); // from the head check recorded by the start before
  // The check recorded under cap 10 is not trusted under another cap.
  setCap(500);
  assert(!(await brief("fourth")).includes("VALIDATION NEEDED"));
});
