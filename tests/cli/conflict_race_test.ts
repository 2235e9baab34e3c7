/**
 * Concurrent runs racing on one key from separate processes: every race ends
 * with exactly one accepted candidate and the others contested in one
 * stale-base conflict, never two accepted. Repeated 10 times for two and for
 * three racing runs.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  expectOk as ok,
  newSubject,
  readStoreJson as json,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

const RACES = 10;

/** Seeds one Tier 2 subject per race so every race starts from an existing generation. */
async function seed(root: string, keys: string[]): Promise<void> {
  const run = await startRun(root, "seed");
  const staged = await Promise.all(
    keys.map((key) => bimri(root, newSubject(run, key, `Seed value of ${key}.`))),
  );
  staged.forEach((r) => ok(r, "seed propose"));
  ok(await bimri(root, ["close", "--run", run, "--outcome", "success"]), "seed close");
}

/**
 * One race: every racing run stages a different value for `key` (all observed
 * the same generation), then all sync at once. The runs are reused across
 * races; each sync moves its base to the head, and the next race's key is
 * untouched since the seed.
 */
async function race(root: string, runs: string[], key: string, replay: boolean): Promise<void> {
  const runners = runs.length;
  const proposals = await Promise.all(
    runs.map((run, i) =>
      bimri(root, ["propose", "--run", run, "--key", key, "--text", `Value ${i} of ${key}.`])
    ),
  );
  const ids = proposals.map((p) => ok(p, "racer propose").stdout.trim());
  // The race itself: every run syncs at the same time from its own process.
  const syncs = await Promise.all(runs.map((run) => bimri(root, ["sync", "--run", run])));
  syncs.forEach((s) => ok(s, "racer sync"));

  const outcomes = ids.map((id) => json(root, `decisions/${id}.json`).outcome as string);
  const accepted = ids.filter((_, i) => outcomes[i] === "accepted");
  const contested = ids.filter((_, i) => outcomes[i] === "contested");
  assertEquals(accepted.length, 1, `${key}: exactly one accepted, got ${outcomes.join(",")}`);
  assertEquals(contested.length, runners - 1, `${key}: the others contested`);

  // All losers joined one conflict that names the winner's live line.
  const conflictIds = new Set(
    contested.map((id) => json(root, `decisions/${id}.json`).conflict_id as string),
  );
  assertEquals(conflictIds.size, 1, `${key}: one conflict for all losers`);
  const conflict = json(root, `conflicts/${[...conflictIds][0]}.json`);
  assertEquals(conflict.key, key);
  assertEquals(conflict.type, "stale-base");
  assertEquals([...(conflict.proposal_ids as string[])].sort(), [...contested].sort());
  const winner = ids.indexOf(accepted[0]);
  assertMatch(String(conflict.current_line), new RegExp(`Value ${winner} of ${key}\\.`));

  // Exactly one notice per loser across all sync outputs; the winner's sync printed none.
  const notices = syncs.map((s) => (s.stdout.match(/^MEMORY CONFLICT C\d{6} — /gm) ?? []).length);
  assertEquals(notices[winner], 0);
  assertEquals(notices.reduce((a, b) => a + b, 0), runners - 1);
  if (replay) {
    // A replay is silent and counts nothing new.
    const again = ok(await bimri(root, ["sync", "--run", runs[(winner + 1) % runners]]), "replay");
    assert(!again.stdout.includes("MEMORY CONFLICT"), "a replayed sync prints no notice");
    assertMatch(again.stdout, /new concurrent conflicts 0\b/);
  }
}

async function raceSeries(runners: number): Promise<void> {
  const root = await tempStore();
  try {
    const keys = Array.from({ length: RACES }, (_, i) => `race.key-${i}`);
    await seed(root, keys);
    const runs = await Promise.all(
      Array.from({ length: runners }, (_, i) => startRun(root, `racer-${i}`)),
    );
    for (const [i, key] of keys.entries()) await race(root, runs, key, i === 0);
    // One conflict per race, numbered without gaps.
    const state = json(root, "state.json");
    assertEquals(state.conflict_count, RACES);
    const head = Deno.readTextFileSync(join(root, "bimri.md"));
    for (const key of keys) {
      assertEquals(head.split(`[K:${key}]`).length - 1, 1, `${key} is current exactly once`);
    }
    const review = ok(await bimri(root, ["review", "--limit", "3"]), "review");
    assertMatch(review.stdout, new RegExp(`^Actionable concurrent conflicts: ${RACES}$`, "m"));
    assertMatch(
      review.stdout,
      new RegExp(
        `^Review records: total ${RACES} \\| displayed 1-3 \\| remaining ${RACES - 3}$`,
        "m",
      ),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("two runs racing on one key, 10 times: one accepted, one contested", async () => {
  await raceSeries(2);
});

Deno.test("three runs racing on one key, 10 times: one accepted, two contested in one conflict", async () => {
  await raceSeries(3);
});
