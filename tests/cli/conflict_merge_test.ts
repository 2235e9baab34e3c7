/**
 * Runs that do not really disagree: independent keys merge without any
 * conflict, and the same value written by two runs is a strict no-op.
 */
import { join } from "node:path";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  expectOk as ok,
  newSubject,
  readStoreJson as json,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

async function seed(root: string, keys: string[]): Promise<void> {
  const run = await startRun(root, "seed");
  for (const key of keys) {
    ok(
      await bimri(root, newSubject(run, key, `Seed value of ${key}.`)),
      "seed propose",
    );
  }
  ok(await bimri(root, ["close", "--run", run, "--outcome", "success"]), "seed close");
}

Deno.test("runs changing independent keys merge without conflict", async () => {
  const root = await tempStore();
  try {
    await seed(root, ["ind.a", "ind.b", "ind.c"]);
    const runs = await Promise.all(["x", "y", "z"].map((actor) => startRun(root, actor)));
    const keys = ["ind.a", "ind.b", "ind.c"];
    const ids = await Promise.all(runs.map(async (run, i) =>
      ok(
        await bimri(root, ["propose", "--run", run, "--key", keys[i], "--text", `New ${keys[i]}.`]),
        "propose",
      ).stdout.trim()
    ));
    const syncs = await Promise.all(runs.map((run) => bimri(root, ["sync", "--run", run])));
    for (const s of syncs) {
      ok(s, "sync");
      assertMatch(
        s.stdout,
        /applied 1, held candidates 0, already satisfied\/no change 0, new concurrent conflicts 0\b/,
      );
    }
    for (const id of ids) assertEquals(json(root, `decisions/${id}.json`).outcome, "accepted");
    assertEquals(json(root, "state.json").conflict_count, 0);
    const head = Deno.readTextFileSync(join(root, "bimri.md"));
    for (const key of keys) assertMatch(head, new RegExp(`\\[K:${key}\\].* New ${key}\\.`));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the same value written by two runs is a strict no-op, not a conflict", async () => {
  const root = await tempStore();
  try {
    await seed(root, ["same.value"]);
    const [a, b] = await Promise.all([startRun(root, "a"), startRun(root, "b")]);
    const ids = [];
    for (const run of [a, b]) {
      const r = await bimri(root, [
        "propose",
        "--run",
        run,
        "--key",
        "same.value",
        "--text",
        "Agreed.",
      ]);
      ids.push(ok(r, "propose").stdout.trim());
    }
    ok(await bimri(root, ["sync", "--run", a]), "sync a");
    const second = ok(await bimri(root, ["sync", "--run", b]), "sync b");
    assertMatch(second.stdout, /already satisfied\/no change 1, new concurrent conflicts 0\b/);
    const decision = json(root, `decisions/${ids[1]}.json`);
    assertEquals(decision.outcome, "noop");
    assertEquals(decision.reason, "current memory already matches");
    assertEquals(json(root, "state.json").conflict_count, 0);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a touch after another run's touch of the same generation is a causal no-op", async () => {
  const root = await tempStore();
  try {
    await seed(root, ["touch.me"]);
    const [a, b] = [await startRun(root, "a"), await startRun(root, "b")];
    const ids = [];
    for (const run of [a, b]) {
      const r = await bimri(root, [
        "propose",
        "--run",
        run,
        "--operation",
        "touch",
        "--key",
        "touch.me",
      ]);
      ids.push(ok(r, "touch").stdout.trim());
    }
    ok(await bimri(root, ["sync", "--run", b]), "sync b");
    const later = ok(await bimri(root, ["sync", "--run", a]), "sync a");
    assertMatch(later.stdout, /already satisfied\/no change 1, new concurrent conflicts 0\b/);
    assertEquals(json(root, `decisions/${ids[0]}.json`).outcome, "noop");
    assertEquals(json(root, "state.json").conflict_count, 0);
    // Recency is not regressed: the line keeps the later toucher's run.
    const view = Deno.readTextFileSync(join(root, "bimri.md"));
    assertMatch(view, new RegExp(`\\[K:touch\\.me\\].*\\[L:${b}\\]`));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a stale intent after the owner answered a conflict raises a new question, and a moved live value does too", async () => {
  const root = await tempStore();
  const must2 = async (args: string[]) => {
    const r = await bimri(root, args);
    assertEquals(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  const seed = await startRun(root, "seed");
  await must2(newSubject(seed, "merge.answered", "Original."));
  await must2(["close", "--run", seed]);
  const runs: string[] = [];
  for (const actor of ["a", "b", "d", "f"]) runs.push(await startRun(root, actor));
  const [ra, rb, rd, rf] = runs;
  const set = (run: string, text: string) =>
    must2(["propose", "--run", run, "--key", "merge.answered", "--text", text]);
  await set(ra, "From a.");
  await set(rb, "From b.");
  const late = (await set(rd, "From d.")).trim();
  const moved = (await set(rf, "From f.")).trim();
  await must2(["sync", "--run", ra]);
  await must2(["sync", "--run", rb]);
  const first = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/conflicts/C000001.json`));
  await must2(["resolve", "C000001", "--choose", "current", "--human-approved"]);
  // D staged against the same old value: the answered question is not reopened.
  assertMatch(await must2(["sync", "--run", rd]), /new concurrent conflicts 1/);
  const lateDecision = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/decisions/${late}.json`));
  assertEquals(lateDecision.conflict_id, "C000002");
  assertEquals(
    JSON.parse(Deno.readTextFileSync(`${root}/.bimri/conflicts/C000001.json`)).proposal_ids,
    first.proposal_ids,
  );
  // E moves the live value on; F's stale intent is a question about the new value.
  const re = await startRun(root, "e");
  await set(re, "From e.");
  await must2(["sync", "--run", re]);
  await must2(["sync", "--run", rf]);
  const movedDecision = JSON.parse(
    Deno.readTextFileSync(`${root}/.bimri/decisions/${moved}.json`),
  );
  assertEquals(movedDecision.outcome, "contested");
  const conflict = JSON.parse(
    Deno.readTextFileSync(`${root}/.bimri/conflicts/${movedDecision.conflict_id}.json`),
  );
  assertMatch(conflict.current_line, /From e\./);
  assertEquals(movedDecision.conflict_id, "C000003");
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
});
