/**
 * Conflict detection in the commit loop: an incompatible concurrent edit is
 * contested once (with its notice printed once), compatible exact sets,
 * closes and touches become no-ops, independent keys merge, and racing
 * syncs from separate processes never accept two candidates.
 */
import { createHash } from "node:crypto";
import { assert, assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import { bimri, newSubject, startRun, tempStore } from "../helpers/cli.ts";

function json(path: string) {
  return JSON.parse(Deno.readTextFileSync(path));
}

async function seeded(keys: string[]): Promise<string> {
  const root = await tempStore();
  const seed = await startRun(root, "seed");
  for (const key of keys) {
    const r = await bimri(root, newSubject(seed, key, `${key} v1.`));
    assertEquals(r.code, 0, r.stderr);
  }
  assertEquals((await bimri(root, ["close", "--run", seed])).code, 0);
  return root;
}

Deno.test("concurrent edit is contested once; compatible intents are no-ops; independent keys merge", async () => {
  const root = await seeded(["e.edit", "e.same", "e.close", "e.touch"]);
  const b = await startRun(root, "bob");
  const c = await startRun(root, "carol");
  const pb = (args: string[]) => bimri(root, ["propose", "--run", b, ...args]);
  const pc = (args: string[]) => bimri(root, ["propose", "--run", c, ...args]);
  await pb(["--key", "e.edit", "--text", "Edit from bob."]);
  await pb(["--key", "e.same", "--text", "Agreed value."]);
  await pb(["--operation", "close", "--key", "e.close"]);
  await pb(["--operation", "touch", "--key", "e.touch"]);
  await pb(["--tier", "2", "--new-subject", "--key", "e.bob", "--text", "Bob only."]);
  await pc(["--key", "e.edit", "--text", "Edit from carol."]);
  await pc(["--key", "e.same", "--text", "Agreed value."]);
  await pc(["--operation", "close", "--key", "e.close"]);
  await pc(["--operation", "touch", "--key", "e.touch"]);
  await pc(["--tier", "2", "--new-subject", "--key", "e.carol", "--text", "Carol only."]);

  assertMatch(
    (await bimri(root, ["sync", "--run", b])).stdout,
    /applied 5, held candidates 0, already satisfied\/no change 0, new concurrent conflicts 0/,
  );
  const touchedLine = Deno.readTextFileSync(`${root}/bimri.md`).split("\n").find((l) =>
    l.includes("[K:e.touch]")
  );
  const sync = await bimri(root, ["sync", "--run", c]);
  assertEquals(sync.code, 0, sync.stderr);
  assertMatch(sync.stdout, /^MEMORY CONFLICT C000001 — Concurrent edit$/m);
  assertMatch(sync.stdout, /^New conflict notices: total 1 \| displayed 1-1 \| remaining 0$/m);
  assertMatch(
    sync.stdout,
    /applied 1, held candidates 0, already satisfied\/no change 3, new concurrent conflicts 1, agent-action failures 0\.$/m,
  );

  const dir = `${root}/.bimri/decisions`;
  const edit = json(`${dir}/${c}-Q001.json`);
  assertEquals([edit.outcome, edit.conflict_id], ["contested", "C000001"]);
  const same = json(`${dir}/${c}-Q002.json`);
  assertEquals([same.outcome, same.reason, same.effect_storage], [
    "noop",
    "current memory already matches",
    "hot",
  ]);
  const closed = json(`${dir}/${c}-Q003.json`);
  assertEquals([closed.outcome, closed.reason, closed.effect_line, closed.effect_hash], [
    "noop",
    "memory already absent",
    null,
    "absent",
  ]);
  const touched = json(`${dir}/${c}-Q004.json`);
  assertEquals([touched.outcome, touched.reason], ["noop", "current memory already matches"]);
  assertEquals(json(`${dir}/${c}-Q005.json`).outcome, "accepted");
  const view = Deno.readTextFileSync(`${root}/bimri.md`);
  assertEquals(
    view.split("\n").find((l) => l.includes("[K:e.touch]")),
    touchedLine,
    "recency is not regressed",
  );
  assertMatch(view, /\[L:R000002\] \[\] Edit from bob\./);
  assert(view.includes("Bob only.") && view.includes("Carol only."));

  const conflict = json(`${root}/.bimri/conflicts/C000001.json`);
  assertEquals([conflict.type, conflict.key, conflict.proposal_ids], ["stale-base", "e.edit", [
    `${c}-Q001`,
  ]]);
  assertEquals(conflict.extra, { current_storage: "hot" });
  const bytes = Deno.readFileSync(`${root}/.bimri/proposals/${c}-Q001.json`);
  assertEquals(
    conflict.proposal_hashes[`${c}-Q001`],
    createHash("sha256").update(bytes).digest("hex"),
  );
  assertEquals(json(`${root}/.bimri/state.json`).conflict_count, 1);

  const replay = await bimri(root, ["sync", "--run", c]);
  assertNotMatch(replay.stdout, /MEMORY CONFLICT/);
  assertMatch(
    replay.stdout,
    /applied 0, held candidates 0, already satisfied\/no change 0, new concurrent conflicts 0/,
  );
  assertEquals((await bimri(root, ["doctor"])).code, 0);
});

Deno.test("racing syncs from separate processes accept exactly one candidate", async () => {
  for (let round = 0; round < 2; round++) {
    const root = await seeded(["race.key"]);
    const runs = [
      await startRun(root, "r1"),
      await startRun(root, "r2"),
      await startRun(root, "r3"),
    ];
    for (const run of runs) {
      const r = await bimri(root, [
        "propose",
        "--run",
        run,
        "--key",
        "race.key",
        "--text",
        `Value from ${run}.`,
      ]);
      assertEquals(r.code, 0, r.stderr);
    }
    const results = await Promise.all(runs.map((run) => bimri(root, ["sync", "--run", run])));
    for (const r of results) assertEquals(r.code, 0, r.stderr);
    const outcomes = runs.map((run) => json(`${root}/.bimri/decisions/${run}-Q001.json`).outcome)
      .sort();
    assertEquals(outcomes, ["accepted", "contested", "contested"], `round ${round}`);
    const conflict = json(`${root}/.bimri/conflicts/C000001.json`);
    assertEquals(conflict.proposal_ids.length, 2, "both losers join one conflict");
    assert(!Deno.readDirSync(`${root}/.bimri/conflicts`).some((e) => e.name === "C000002.json"));
  }
});

Deno.test("later same-key intents are held while an owner resolution is applying", async () => {
  const root = await seeded(["k.x"]);
  const [b, c, d] = [
    await startRun(root, "b"),
    await startRun(root, "c"),
    await startRun(root, "d"),
  ];
  await bimri(root, ["propose", "--run", b, "--key", "k.x", "--text", "X from b."]);
  await bimri(root, ["propose", "--run", c, "--key", "k.x", "--text", "X from c."]);
  await bimri(root, ["sync", "--run", b]);
  await bimri(root, ["sync", "--run", c]);
  await bimri(root, ["sync", "--run", d]);
  const crashed = await bimri(root, [
    "resolve",
    "C000001",
    "--choose",
    `${c}-Q001`,
    "--human-approved",
  ], {
    env: { BIMRI_FAULT: "resolve-applying-written" },
  });
  assertEquals(crashed.code, 86);
  const staged = await bimri(root, ["propose", "--run", d, "--key", "k.x", "--text", "X from d."]);
  assertEquals(staged.code, 0, staged.stderr);
  assertEquals(
    json(`${root}/.bimri/proposals/${d}-Q001.json`).hold_reason,
    "owner-resolution-in-progress",
  );
  const sync = await bimri(root, ["sync", "--run", d]);
  assertMatch(
    sync.stdout,
    /^BIMRI HELD: The intent is preserved and current truth is unchanged while an earlier owner resolution finishes\./m,
  );
  assertEquals(
    json(`${root}/.bimri/decisions/${d}-Q001.json`).reason,
    "owner-resolution-in-progress",
  );
  assert(!Deno.readTextFileSync(`${root}/bimri.md`).includes("X from d."));
});

Deno.test("a sync cut short after it raised a conflict grows that conflict when retried, not a second one", async () => {
  const root = await seeded(["e.edit"]);
  const b = await startRun(root, "bob");
  const c = await startRun(root, "carol");
  assertEquals(
    (await bimri(root, ["propose", "--run", b, "--key", "e.edit", "--text", "Bob."])).code,
    0,
  );
  assertEquals(
    (await bimri(root, ["propose", "--run", c, "--key", "e.edit", "--text", "Carol."])).code,
    0,
  );
  assertEquals((await bimri(root, ["sync", "--run", b])).code, 0);
  // The conflict file is durable, conflict_count and the decision are not yet.
  const cut = await bimri(root, ["sync", "--run", c], {
    env: { BIMRI_FAULT: "after-conflict-created" },
  });
  assertEquals(cut.code, 86, cut.stderr);
  assertEquals(json(`${root}/.bimri/state.json`).conflict_count, 0);
  const retry = await bimri(root, ["sync", "--run", c]);
  assertEquals(retry.code, 0, retry.stderr);
  const conflicts = [...Deno.readDirSync(`${root}/.bimri/conflicts`)].map((e) => e.name);
  assertEquals(conflicts, ["C000001.json"]);
  assertEquals(json(`${root}/.bimri/conflicts/C000001.json`).proposal_ids, [`${c}-Q001`]);
  const decision = json(`${root}/.bimri/decisions/${c}-Q001.json`);
  assertEquals([decision.outcome, decision.conflict_id], ["contested", "C000001"]);
  assertEquals(json(`${root}/.bimri/state.json`).conflict_count, 1);
  assertMatch((await bimri(root, ["review"])).stdout, /^Actionable concurrent conflicts: 1$/m);
  const doctor = await bimri(root, ["doctor", "--read-only"]);
  assertEquals(doctor.code, 0, doctor.stdout);
});
