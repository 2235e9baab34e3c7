/**
 * Byte pressure: cooling into cold_current with exact archive bindings,
 * rehydration by set and touch, close of a cold subject, and the
 * capacity-residency-required hold when nothing can cool.
 */
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { createHash } from "node:crypto";
import {
  bimri,
  copyStore,
  diffTrees,
  hashTree,
  newSubject,
  proposeTier2,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

const LONG = "lorem ipsum dolor sit amet ".repeat(12).trim();

function state(root: string) {
  return JSON.parse(Deno.readTextFileSync(`${root}/.bimri/state.json`));
}

function setCeiling(root: string, bytes: number): void {
  // Test setup: a smaller ceiling reaches byte pressure with a few subjects.
  const s = state(root);
  s.hot_max_bytes = bytes;
  Deno.writeTextFileSync(`${root}/.bimri/state.json`, JSON.stringify(s, null, 2) + "\n");
}

function archive(root: string): string[] {
  return [...Deno.readDirSync(`${root}/.bimri/archive`)].flatMap((e) =>
    Deno.readTextFileSync(`${root}/.bimri/archive/${e.name}`).split("\n").filter((l) => l !== "")
  );
}

function assertBindings(root: string): void {
  const rows = archive(root);
  for (
    const [key, cold] of Object.entries(state(root).cold_current) as [
      string,
      Record<string, string>,
    ][]
  ) {
    const row = `[ARCHIVED:${cold.archived_on}] [BY:${cold.archived_by}] [cooled] ${cold.raw_line}`;
    assertEquals(rows.filter((r) => r === row).length, 1, `cold binding of ${key}`);
  }
}

Deno.test("cooling, rehydration by set and touch, close of a cold subject, capacity hold", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  const p = (args: string[]) => bimri(root, ["propose", "--run", run, ...args]);
  for (const [i, importance] of [4, 1, 5, 3].entries()) {
    const r = await p([
      "--tier",
      "2",
      "--new-subject",
      "--key",
      `p.s${i}`,
      "--importance",
      String(importance),
      "--text",
      `S${i} ${LONG}`,
    ]);
    assertEquals(r.code, 0, r.stderr);
  }
  assertMatch((await bimri(root, ["sync", "--run", run])).stdout, /applied 4,/);
  const viewBytes = Deno.readFileSync(`${root}/bimri.md`).length;
  setCeiling(root, viewBytes + 100);

  // A fifth subject crosses the ceiling: compacting is not enough, p.s1 (importance 1) cools.
  await p([
    "--tier",
    "2",
    "--new-subject",
    "--key",
    "p.s4",
    "--importance",
    "2",
    "--text",
    `S4 ${LONG}`,
  ]);
  assertMatch((await bimri(root, ["sync", "--run", run])).stdout, /applied 1,/);
  let s = state(root);
  assertEquals(Object.keys(s.cold_current), ["p.s1"]);
  assertEquals(s.cold_current["p.s1"].archived_by, `${run}-Q005`);
  let view = Deno.readTextFileSync(`${root}/bimri.md`);
  assert(!view.includes("[K:p.s1]") && view.includes("[K:p.s4]"));
  assert(Deno.readFileSync(`${root}/bimri.md`).length <= s.hot_max_bytes);
  assert(view.includes("<!-- BIMRI v5.0.2 | Generated. -->"), "header compacted under pressure");
  assertBindings(root);

  // Set on the cold subject rehydrates it; the next coolest (p.s4, importance 2) cools.
  await p(["--key", "p.s1", "--text", `S1 again ${LONG}`]);
  const proposal = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/proposals/${run}-Q006.json`));
  assertEquals([proposal.base_storage, proposal.base_archive_proposal_id], ["cold", `${run}-Q005`]);
  assertMatch((await bimri(root, ["sync", "--run", run])).stdout, /applied 1,/);
  s = state(root);
  assertEquals(Object.keys(s.cold_current), ["p.s4"]);
  view = Deno.readTextFileSync(`${root}/bimri.md`);
  assertMatch(view, /\[K:p\.s1\] \[I:1\].* S1 again /);
  assert(
    archive(root).some((r) => r.includes(`[BY:${run}-Q006] [replaced] [${run}-E002] [K:p.s1]`)),
  );
  assertBindings(root);

  // Another run's touch of the cold subject rehydrates it unchanged except L:.
  await bimri(root, ["close", "--run", run]);
  const run2 = await startRun(root, "claude");
  const p2 = (args: string[]) => bimri(root, ["propose", "--run", run2, ...args]);
  await p2(["--operation", "touch", "--key", "p.s4"]);
  assertMatch((await bimri(root, ["sync", "--run", run2])).stdout, /applied 1,/);
  s = state(root);
  assert(!("p.s4" in s.cold_current), "touched subject is hot again");
  assertMatch(Deno.readTextFileSync(`${root}/bimri.md`), /\[K:p\.s4\] .*\[L:R000002\] \[\] S4 /);
  assertBindings(root);

  // Close of whatever is cold now: a closed row, and it leaves cold_current.
  const [coldKey] = Object.keys(s.cold_current);
  assert(coldKey, "something cooled to make room for the touch");
  await p2(["--operation", "close", "--key", coldKey]);
  assertMatch((await bimri(root, ["sync", "--run", run2])).stdout, /applied 1,/);
  assertEquals(Object.keys(state(root).cold_current), []);
  assert(archive(root).some((r) => r.includes("[closed]") && r.includes(`[K:${coldKey}]`)));

  // Nothing can cool below a Tier 1 line this long: the intent is held, truth unchanged.
  setCeiling(root, 700);
  const before = Deno.readTextFileSync(`${root}/bimri.md`);
  const held = await p2([
    "--tier",
    "1",
    "--new-subject",
    "--key",
    "core.big",
    "--kind",
    "fact",
    "--source",
    "user",
    "--trust",
    "confirmed",
    "--text",
    LONG + LONG.slice(0, 150),
  ]);
  assertEquals(held.code, 0, held.stderr);
  const heldProposal = JSON.parse(
    Deno.readTextFileSync(`${root}/.bimri/proposals/${held.stdout.trim()}.json`),
  );
  assertEquals(heldProposal.hold_reason, "capacity-residency-required");
  const sync = await bimri(root, ["sync", "--run", run2]);
  assertMatch(
    sync.stdout,
    /^BIMRI HELD: The intent is preserved, but no eligible hot resident could cool; current truth is unchanged\.$/m,
  );
  assertMatch(sync.stdout, /held candidates 1,/);
  assertEquals(Deno.readTextFileSync(`${root}/bimri.md`), before);
  setCeiling(root, 49152);
  const doctor = await bimri(root, ["doctor"]);
  assertEquals(doctor.code, 0, doctor.stdout + doctor.stderr);
});

Deno.test("a candidate's value written straight to cold storage stays a satisfied historical candidate after a later value", async () => {
  const root = await tempStore();
  const key = "cold.satisfied";
  const set = async (run: string, text: string, extra: string[] = []) => {
    const r = await bimri(
      root,
      proposeTier2(run, key, text, ["--source", "user", "--trust", "confirmed", ...extra]),
    );
    assertEquals(r.code, 0, r.stderr);
    return r.stdout.trim();
  };
  const sync = async (run: string) => {
    const r = await bimri(root, ["sync", "--run", run]);
    assertEquals(r.code, 0, r.stderr);
  };
  const seed = await startRun(root, "seed");
  await set(seed, "Original value.", ["--new-subject", "--importance", "3"]);
  await sync(seed);
  setCeiling(root, Deno.readFileSync(`${root}/bimri.md`).length + 32);
  // Every longer value of the key now goes straight to cold storage.
  const [live, candidate] = [await startRun(root, "live"), await startRun(root, "cand")];
  const candidateText = "Exact candidate value. " + "c".repeat(300);
  await set(live, "Different accepted value. " + "l".repeat(300));
  const chosen = await set(candidate, candidateText);
  await sync(live);
  await sync(candidate);
  const contested = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/decisions/${chosen}.json`));
  assertEquals(contested.outcome, "contested");
  const satisfier = await startRun(root, "satisfier");
  const satisfying = await set(satisfier, candidateText);
  await sync(satisfier);
  const at = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/decisions/${satisfying}.json`))
    .revision;
  assert(key in state(root).cold_current, "the satisfying value is cold");
  const later = await startRun(root, "later");
  await set(later, "Later distinct value. " + "z".repeat(300));
  await sync(later);
  const status = (await bimri(root, ["status"])).stdout;
  assertMatch(status, /Actionable concurrent conflicts: 0\b/);
  assertMatch(status, /Satisfied historical candidates: 1\b/);
  const all = (await bimri(root, ["review", "--all"])).stdout;
  assertMatch(all, /SATISFIED HISTORICAL CANDIDATE/);
  assertMatch(all, new RegExp(`already satisfied by V0*${at}\\b`));
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
});

Deno.test("a writer refuses, changing nothing, a state.json whose cold records disagree with the store", async () => {
  const base = await tempStore();
  const run = await startRun(base, "seed");
  const set = (r: string, key: string, text: string, extra: string[] = []) =>
    bimri(base, ["propose", "--run", r, "--tier", "2", "--key", key, "--text", text, ...extra]);
  assertEquals((await set(run, "cold.one", "Short.", ["--new-subject"])).code, 0);
  assertEquals((await bimri(base, ["sync", "--run", run])).code, 0);
  setCeiling(base, Deno.readFileSync(`${base}/bimri.md`).length + 32);
  assertEquals((await set(run, "cold.one", `Long ${LONG}`)).code, 0);
  assertEquals((await bimri(base, ["sync", "--run", run])).code, 0);
  assert("cold.one" in state(base).cold_current, "cold.one went cold");
  assertEquals((await bimri(base, ["start", "--actor", "check"])).code, 0);

  const damages: [string, (root: string) => void, RegExp][] = [
    [
      "unbound cold record",
      (root) => {
        const s = state(root);
        s.cold_current["cold.one"].archived_by = "R999999-Q999";
        Deno.writeTextFileSync(`${root}/.bimri/state.json`, JSON.stringify(s, null, 2) + "\n");
      },
      /cold-current subject cold\.one is not bound to exactly one immutable cooled archive record/,
    ],
    ["hot and cold", (root) => {
      const s = state(root);
      const head = `${root}/.bimri/revisions/V${String(s.head_revision).padStart(6, "0")}.md`;
      const text = Deno.readTextFileSync(head).replace(
        "## Tier 2: Active Context\n",
        `## Tier 2: Active Context\n${s.cold_current["cold.one"].raw_line}\n`,
      );
      Deno.writeTextFileSync(head, text);
      Deno.writeTextFileSync(`${root}/bimri.md`, text);
      s.head_hash = createHash("sha256").update(text).digest("hex");
      Deno.writeTextFileSync(`${root}/.bimri/state.json`, JSON.stringify(s, null, 2) + "\n");
    }, /subject cold\.one is current both hot and cold-current/],
  ];
  for (const [what, damage, message] of damages) {
    const root = await copyStore(base);
    damage(root);
    const before = hashTree(root);
    for (
      const args of [
        ["start", "--actor", "late"],
        ["sync", "--run", run],
        // start, journal and propose load the check on demand and run again (commands/run.ts).
        ["journal", "--run", run, "--text", "Noted."],
        ["propose", "--run", run, "--key", "other.key", "--new-subject", "--text", "New."],
      ]
    ) {
      const r = await bimri(root, args);
      assertEquals(r.code, 2, `${what} ${args[0]}: ${r.stdout}`);
      assertMatch(r.stderr, message, what);
      assertEquals(diffTrees(before, hashTree(root)), null, `${what} ${args[0]}`);
    }
    const audit = await bimri(root, ["doctor", "--read-only"]);
    assertEquals(audit.code, 1, what);
  }
});

Deno.test("new Tier 2 subjects that only fit cold go straight to cold storage, even when no hot byte changes", async () => {
  const root = await tempStore();
  const run = await startRun(root, "owner");
  for (const i of [1, 2, 3]) {
    const r = await bimri(root, [
      "propose",
      "--run",
      run,
      "--tier",
      "1",
      "--kind",
      "fact",
      "--new-subject",
      "--key",
      `protected.k${i}`,
      "--text",
      `Owner fact ${i} with some length to it.`,
      "--source",
      "user",
      "--trust",
      "confirmed",
    ]);
    assertEquals(r.code, 0, r.stderr);
  }
  assertMatch((await bimri(root, ["sync", "--run", run])).stdout, /applied 3,/);
  // Only Tier 1 lines are hot and one more line overflows: the incoming line itself must cool.
  // The first such commit also compacts the view's header; the second changes no hot byte.
  setCeiling(root, Deno.readFileSync(`${root}/bimri.md`).length + 20);
  for (const key of ["incoming.first", "incoming.second"]) {
    const text = `Incoming Tier 2 subject ${key} that cannot fit in hot memory at all.`;
    const id = (await bimri(root, newSubject(run, key, text))).stdout.trim();
    assertMatch((await bimri(root, ["sync", "--run", run])).stdout, /applied 1,/, key);
    const cold = state(root).cold_current[key];
    assertEquals(cold?.archived_by, id, key);
    assertMatch(cold.raw_line, /Incoming Tier 2 subject/);
    assert(!Deno.readTextFileSync(`${root}/bimri.md`).includes(key), `${key} not hot`);
  }
  assertBindings(root);
  assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
});
