/**
 * propose: preflight refusals write nothing, same-run retries are idempotent,
 * trust/source rules, hold reasons and inheritance of omitted fields.
 */
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree, newSubject, startRun, tempStore } from "../helpers/cli.ts";

function readJson(path: string) {
  return JSON.parse(Deno.readTextFileSync(path));
}

Deno.test("refusals write nothing; an identical retry returns the same ID without writing", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  const p = (args: string[]) => bimri(root, ["propose", "--run", run, ...args]);
  const first = await p([
    "--tier",
    "2",
    "--new-subject",
    "--key",
    "api.timeout",
    "--text",
    "Timeout is 30 s.",
  ]);
  assertEquals(first.stdout, "R000001-Q001\n");
  const before = hashTree(root);
  const retry = await p([
    "--tier",
    "2",
    "--new-subject",
    "--key",
    "api.timeout",
    "--text",
    "Timeout is 30 s.",
  ]);
  assertEquals(retry.code, 0);
  assertEquals(retry.stdout, "R000001-Q001\n");
  assertEquals(diffTrees(before, hashTree(root)), null, "an idempotent retry writes nothing");
  const refusals: [string[], RegExp][] = [
    [
      ["--tier", "2", "--new-subject", "--key", "api.timeout", "--text", "Other."],
      /already pending for api\.timeout; sync R000001/,
    ],
    [[
      "--tier",
      "2",
      "--new-subject",
      "--key",
      "x.y",
      "--source",
      "agent",
      "--trust",
      "confirmed",
      "--text",
      "X.",
    ], /only directly human-stated or system memory may be confirmed/],
    [
      ["--tier", "2", "--new-subject", "--key", "x.y", "--source", "system", "--text", "X."],
      /system provenance/,
    ],
    [
      ["--tier", "2", "--new-subject", "--key", "x.y", "--needs-human", "--text", "X."],
      /ask the owner/,
    ],
    [
      ["--tier", "3", "--new-subject", "--key", "x.y", "--text", "X."],
      /Tier 3 requires --falsifier/,
    ],
    [
      ["--tier", "2", "--new-subject", "--key", "x.y", "--tags", "ok,Bad Tag", "--text", "X."],
      /invalid tag: bad tag/,
    ],
    [["--operation", "touch", "--key", "never.seen"], /touch requires an existing key/],
    [
      ["--key", "never.seen", "--text", "No tier."],
      /never\.seen is a new key, so --tier is required/,
    ],
  ];
  for (const [args, message] of refusals) {
    const result = await p(args);
    assertEquals(result.code, 2, args.join(" "));
    assertMatch(result.stderr, /^BIMRI ERROR: /);
    assertMatch(result.stderr, message);
    assertEquals(
      diffTrees(before, hashTree(root)),
      null,
      `refused ${args.join(" ")} wrote something`,
    );
  }
});

Deno.test("stale base and exact no-op are refused until the run syncs", async () => {
  const root = await tempStore();
  const a = await startRun(root, "alice");
  await bimri(root, newSubject(a, "k.v", "V1."));
  await bimri(root, ["close", "--run", a]);
  const b = await startRun(root, "bob");
  const c = await startRun(root, "carol");
  await bimri(root, ["propose", "--run", b, "--key", "k.v", "--text", "V2."]);
  await bimri(root, ["sync", "--run", b]);
  const stale = await bimri(root, ["propose", "--run", c, "--key", "k.v", "--text", "V3."]);
  assertEquals(stale.code, 2);
  assertMatch(stale.stderr, /k\.v changed after this run observed it; sync R000003/);
  const same = await bimri(root, ["propose", "--run", c, "--key", "k.v", "--text", "V2."]);
  assertEquals(same.code, 2);
  assertMatch(same.stderr, /k\.v already has the requested value; sync R000003/);
  await bimri(root, ["sync", "--run", c]);
  const ok = await bimri(root, ["propose", "--run", c, "--key", "k.v", "--text", "V3."]);
  assertEquals(ok.code, 0, ok.stderr);
});

Deno.test("hold reasons are staged on the proposal and decided as held, announced once", async () => {
  const root = await tempStore();
  const seed = await startRun(root, "seed");
  const ps = (args: string[]) => bimri(root, ["propose", "--run", seed, ...args]);
  await ps([
    "--tier",
    "1",
    "--new-subject",
    "--key",
    "style.tone",
    "--kind",
    "pref",
    "--source",
    "user",
    "--trust",
    "confirmed",
    "--text",
    "Short.",
  ]);
  await ps(["--tier", "2", "--new-subject", "--key", "ops.plan", "--text", "Plan."]);
  await bimri(root, ["close", "--run", seed]);
  const run = await startRun(root);
  const p = (args: string[]) => bimri(root, ["propose", "--run", run, ...args]);
  await p(["--tier", "2", "--key", "ops.plann", "--text", "Typo key."]);
  await p([
    "--tier",
    "1",
    "--new-subject",
    "--key",
    "arch.db",
    "--kind",
    "decision",
    "--text",
    "Use SQLite.",
  ]);
  await p(["--key", "style.tone", "--text", "Long."]);
  const reasons = [
    "classification-required",
    "tier1-human-authority-required",
    "confirmed-user-authority-required",
  ];
  for (const [i, reason] of reasons.entries()) {
    const proposal = readJson(`${root}/.bimri/proposals/R000002-Q00${i + 1}.json`);
    assertEquals(proposal.hold_reason, reason);
  }
  const sync = await bimri(root, ["sync", "--run", run]);
  assertEquals(sync.code, 0);
  assertEquals(sync.stdout.split("\n").filter((l) => l.startsWith("BIMRI HELD: ")).length, 3);
  assertMatch(sync.stdout, /applied 0, held candidates 3,/);
  for (const [i, reason] of reasons.entries()) {
    const decision = readJson(`${root}/.bimri/decisions/R000002-Q00${i + 1}.json`);
    assertEquals([decision.outcome, decision.reason, decision.revision], ["held", reason, 2]);
  }
  const again = await bimri(root, ["sync", "--run", run]);
  assert(!again.stdout.includes("BIMRI HELD"), "an existing held decision is not announced again");
  assertMatch(again.stdout, /held candidates 0,/);
  const view = Deno.readTextFileSync(`${root}/bimri.md`);
  assert(view.includes("Short.") && !view.includes("Long.") && !view.includes("SQLite"));
});

Deno.test("an update inherits kind, importance, status and tags; touch moves only L:", async () => {
  const root = await tempStore();
  const seed = await startRun(root, "seed");
  await bimri(
    root,
    newSubject(seed, "ci.flaky", "Watch it.", [
      "--importance",
      "2",
      "--status",
      "watch",
      "--tags",
      "CI,login,ci",
    ]),
  );
  await bimri(root, newSubject(seed, "docs.todo", "Docs."));
  await bimri(root, ["close", "--run", seed]);
  const run = await startRun(root);
  await bimri(root, [
    "propose",
    "--run",
    run,
    "--key",
    "ci.flaky",
    "--text",
    "Fixed; keep watching.",
  ]);
  await bimri(root, ["propose", "--run", run, "--operation", "touch", "--key", "docs.todo"]);
  const update = readJson(`${root}/.bimri/proposals/R000002-Q001.json`);
  assertEquals([update.importance, update.status, update.tags, update.first_run], [2, "watch", [
    "ci",
    "login",
  ], "R000001"]);
  assertEquals(update.base_storage, "hot");
  assertEquals(update.target_id, "R000001-E001");
  const sync = await bimri(root, ["sync", "--run", run]);
  assertMatch(sync.stdout, /applied 2,/);
  const view = Deno.readTextFileSync(`${root}/bimri.md`);
  assertMatch(
    view,
    /^\[R000002-E001\] \[K:ci\.flaky\] \[I:2\] \[watch\] \[T:working\] \[SRC:agent\] \[F:R000001\] \[L:R000002\] \[ci,login\] Fixed; keep watching\. -> \.bimri\/log\/R000002\.md$/m,
  );
  assertMatch(
    view,
    /^\[R000001-E002\] \[K:docs\.todo\] \[I:3\] \[active\] \[T:working\] \[SRC:agent\] \[F:R000001\] \[L:R000002\] \[\] Docs\. -> \.bimri\/log\/R000002\.md$/m,
  );
  const archive = [...Deno.readDirSync(`${root}/.bimri/archive`)].map((e) =>
    Deno.readTextFileSync(`${root}/.bimri/archive/${e.name}`)
  ).join("");
  assertEquals(
    archive.split("\n").filter((l) => l.includes("[BY:R000002-Q001] [replaced]")).length,
    1,
  );
  assert(!archive.includes("R000002-Q002"), "a touch writes no archive row");
});
