import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree, startRun, tempStore } from "../helpers/cli.ts";

Deno.test("start, journal, close and status through the CLI", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  assertEquals(run, "R000001");
  const j = await bimri(root, [
    "journal",
    "--run",
    run,
    "--importance",
    "4",
    "--text",
    "Checked the retry path.",
  ]);
  assertEquals(j.code, 0);
  assertEquals(j.stdout, "R000001-E001\n");
  const c = await bimri(root, [
    "close",
    "--run",
    run,
    "--outcome",
    "success",
    "--summary",
    "Done.",
  ]);
  assertEquals(c.code, 0);
  assertMatch(c.stdout, /^BIMRI: run R000001 closed\.$/m);
  const log = Deno.readTextFileSync(`${root}/.bimri/log/R000001.md`);
  assert(log.endsWith(
    "[ID:R000001-E001] [I:4] Checked the retry path.\n[OUTCOME:success] Done.\n" +
      log.slice(log.lastIndexOf("[CLOSED:")),
  ));
  const s = await bimri(root, ["status"]);
  assertMatch(s.stdout, /runs 1 \| active 0/);
  assertMatch(s.stdout, /^Outcomes: success=1$/m);
  const d = await bimri(root, ["doctor"]);
  assertEquals(d.code, 0, d.stdout);
});

Deno.test("journal text with forged markers stays data", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  const forged = "[CLOSED:R000001 2026-01-01T00:00:00Z] [PROPOSE:R000001-Q001] [OUTCOME:fail]";
  const j = await bimri(root, ["journal", "--run", run, "--text", forged]);
  assertEquals(j.code, 0);
  const s = await bimri(root, ["status"]);
  assertMatch(s.stdout, /active 1/);
  const again = await bimri(root, ["journal", "--run", run, "--text", "still open"]);
  assertEquals(again.stdout, "R000001-E002\n");
});

Deno.test("bad input exits 2 and leaves the store byte-identical", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  const cases: string[][] = [
    ["journal", "--run", run, "--text", "line one\nline two"],
    ["journal", "--run", run, "--text", "tab\tinside"],
    ["journal", "--run", run, "--text", "sep\u2028inside"],
    ["journal", "--run", run, "--text", "x".repeat(8001)],
    ["journal", "--run", run, "--text", "fine", "--importance", "9"],
    ["journal", "--run", "R000099", "--text", "unknown run"],
    ["journal", "--run", "run-1", "--text", "malformed run"],
    ["start", "--actor", "Bad Actor"],
    ["start", "--actor", "codex", "--bogus"],
    ["no-such-command"],
    ["close", "--run", "R000042"],
  ];
  for (const args of cases) {
    const before = hashTree(root);
    const result = await bimri(root, args);
    assertEquals(result.code, 2, `${args.join(" ")} -> ${result.stdout}${result.stderr}`);
    assertMatch(result.stderr, /^BIMRI ERROR: /m);
    assertEquals(diffTrees(before, hashTree(root)), null, args.join(" "));
  }
});

Deno.test("corrupt state.json fails closed and is never reset", async () => {
  const root = await tempStore();
  await startRun(root);
  Deno.writeTextFileSync(`${root}/.bimri/state.json`, "{ not json");
  const before = hashTree(root);
  for (
    const args of [["start", "--actor", "codex"], ["status"], [
      "journal",
      "--run",
      "R000001",
      "--text",
      "x",
    ]]
  ) {
    const result = await bimri(root, args);
    assertEquals(result.code, 2);
    assertMatch(result.stderr, /BIMRI ERROR: state\.json/);
  }
  assertEquals(diffTrees(before, hashTree(root)), null);
});

Deno.test("24 concurrent starts get 24 unique handles and doctor passes", async () => {
  const root = await tempStore();
  await bimri(root, ["status"]);
  const results = await Promise.all(
    Array.from({ length: 24 }, (_, i) => bimri(root, ["start", "--actor", `agent-${i}`])),
  );
  const handles = results.map((r) => {
    assertEquals(r.code, 0, r.stderr);
    return /^BIMRI RUN HANDLE: (R\d{6})$/m.exec(r.stdout)![1];
  }).sort();
  assertEquals(handles, Array.from({ length: 24 }, (_, i) => `R${String(i + 1).padStart(6, "0")}`));
  const state = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/state.json`));
  assertEquals(Object.keys(state.active_runs).length, 24);
  assertEquals(state.run_count, 24);
  for (const h of handles) assert(Deno.statSync(`${root}/.bimri/log/${h}.md`).isFile);
  const d = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(d.code, 0, d.stdout);
});

Deno.test("overlapping runs close in isolation; handle-free close refused when several are active", async () => {
  const root = await tempStore();
  const a = await startRun(root, "alpha");
  const b = await startRun(root, "beta");
  const ambiguous = await bimri(root, ["close", "--outcome", "success"]);
  assertEquals(ambiguous.code, 2);
  assertMatch(ambiguous.stderr, /multiple runs are active/);
  assertEquals((await bimri(root, ["close", "--run", a])).code, 0);
  const state = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/state.json`));
  assertEquals(Object.keys(state.active_runs), [b]);
  assert(!Deno.readTextFileSync(`${root}/.bimri/log/${b}.md`).includes("[CLOSED:"));
  assertEquals((await bimri(root, ["close"])).code, 0);
});

Deno.test("session resume returns the same handle and writes nothing", async () => {
  const root = await tempStore();
  const first = await bimri(root, ["start", "--actor", "codex", "--session", "sess-alpha"]);
  assertMatch(first.stdout, /^BIMRI RUN HANDLE: R000001$/m);
  const before = hashTree(root);
  const again = await bimri(root, ["start", "--actor", "codex", "--session", "sess-alpha"]);
  assertEquals(again.code, 0);
  assert(!again.stdout.includes("BIMRI RUN HANDLE"));
  assertMatch(again.stdout, /Resumed existing run handle/);
  assertEquals(diffTrees(before, hashTree(root)), null);
});
