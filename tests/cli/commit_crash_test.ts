/**
 * Crash safety of the commit protocol: a sync killed at each durable step
 * (BIMRI_FAULT) must be finished exactly once by the next sync or close, with
 * no lost or duplicated effect, and doctor must pass.
 */
import { assert, assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import { bimri, must, newSubject, readStoreJson, startRun, tempStore } from "../helpers/cli.ts";

const POINTS = [
  "after-applying-decision",
  "after-archive",
  "after-revision",
  "after-state",
  "after-view",
];

/** Seeds two subjects, then stages an update, a new subject and a close. */
async function stagedStore(): Promise<{ root: string; run: string }> {
  const root = await tempStore();
  const run = await startRun(root);
  const p = (args: string[]) => bimri(root, ["propose", "--run", run, ...args]);
  assertEquals(
    (await p(["--tier", "2", "--new-subject", "--key", "a.one", "--text", "One."])).code,
    0,
  );
  assertEquals(
    (await p(["--tier", "2", "--new-subject", "--key", "a.three", "--text", "Three."])).code,
    0,
  );
  assertEquals((await bimri(root, ["sync", "--run", run])).code, 0);
  assertEquals((await p(["--key", "a.one", "--text", "One v2."])).code, 0);
  assertEquals(
    (await p(["--tier", "2", "--new-subject", "--key", "a.two", "--text", "Two."])).code,
    0,
  );
  assertEquals((await p(["--operation", "close", "--key", "a.three"])).code, 0);
  return { root, run };
}

function memoryLines(root: string): string[] {
  return Deno.readTextFileSync(`${root}/bimri.md`).split("\n").filter((l) => l.includes("[K:"));
}

function archiveRows(root: string): string[] {
  const rows: string[] = [];
  for (const entry of Deno.readDirSync(`${root}/.bimri/archive`)) {
    const text = Deno.readTextFileSync(`${root}/.bimri/archive/${entry.name}`);
    rows.push(...text.split("\n").filter((l) => l.startsWith("[ARCHIVED:")));
  }
  return rows.map((r) => r.replace(/^\[ARCHIVED:[0-9-]+\] /, "")).sort();
}

function outcomes(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of Deno.readDirSync(`${root}/.bimri/decisions`)) {
    const d = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/decisions/${entry.name}`));
    out[d.proposal_id] = d.outcome;
  }
  return out;
}

const EXPECTED_LINES = [
  "[R000001-E003] [K:a.one] [I:3] [active] [T:working] [SRC:agent] [F:R000001] [L:R000001] [] One v2. -> .bimri/log/R000001.md",
  "[R000001-E004] [K:a.two] [I:3] [active] [T:working] [SRC:agent] [F:R000001] [L:R000001] [] Two. -> .bimri/log/R000001.md",
];
const EXPECTED_ARCHIVE = [
  "[BY:R000001-Q003] [replaced] [R000001-E001] [K:a.one] [I:3] [active] [T:working] [SRC:agent] [F:R000001] [L:R000001] [] One. -> .bimri/log/R000001.md",
  "[BY:R000001-Q005] [closed] [R000001-E002] [K:a.three] [I:3] [active] [T:working] [SRC:agent] [F:R000001] [L:R000001] [] Three. -> .bimri/log/R000001.md",
];

/** Kills a sync at `point`, finishes with sync or close, and checks exactly-once effects. */
async function crashAndFinish(point: string, finishWithClose: boolean): Promise<void> {
  const { root, run } = await stagedStore();
  const crashed = await bimri(root, ["sync", "--run", run], { env: { BIMRI_FAULT: point } });
  assertEquals(crashed.code, 86, `${point}: the fault point must stop the process`);
  const finish = finishWithClose
    ? await bimri(root, ["close", "--run", run, "--outcome", "success"])
    : await bimri(root, ["sync", "--run", run]);
  assertEquals(finish.code, 0, `${point}: ${finish.stderr}`);
  assertMatch(finish.stdout, finishWithClose ? /Memory: applied 3\./ : /applied 3,/, point);
  assertEquals(memoryLines(root), EXPECTED_LINES, `${point}: memory differs`);
  assertEquals(archiveRows(root), EXPECTED_ARCHIVE, `${point}: archive rows lost or duplicated`);
  const decided = outcomes(root);
  assertEquals(Object.values(decided).filter((o) => o === "accepted").length, 5, point);
  const state = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/state.json`));
  const head = Deno.readTextFileSync(
    `${root}/.bimri/revisions/V${String(state.head_revision).padStart(6, "0")}.md`,
  );
  assertEquals(Deno.readTextFileSync(`${root}/bimri.md`), head, `${point}: view equals head`);
  assertEquals(state.last_revision_reason, `accepted ${run}-Q005`, point);
  const doctor = await bimri(root, ["doctor"]);
  assertEquals(doctor.code, 0, `${point}: doctor\n${doctor.stdout}${doctor.stderr}`);
}

Deno.test("a sync killed before the revision is finished exactly once by the next sync or close", async () => {
  await crashAndFinish(POINTS[0], false);
  await crashAndFinish(POINTS[1], true);
  await crashAndFinish(POINTS[2], false);
});

Deno.test("a sync killed after the revision is finished exactly once by the next sync or close", async () => {
  await crashAndFinish(POINTS[3], true);
  await crashAndFinish(POINTS[4], false);
});

Deno.test("a propose killed before its log marker is completed by the next sync", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  const crashed = await bimri(root, newSubject(run, "b.one", "B one."), {
    env: { BIMRI_FAULT: "after-proposal-file" },
  });
  assertEquals(crashed.code, 86);
  const log = () => Deno.readTextFileSync(`${root}/.bimri/log/${run}.md`);
  assert(!log().includes("[PROPOSE:"), "the marker was not written before the crash");
  const sync = await bimri(root, ["sync", "--run", run]);
  assertEquals(sync.code, 0, sync.stderr);
  assertMatch(sync.stdout, /applied 1,/);
  assertMatch(log(), /^\[PROPOSE:R000001-Q001\] \[set\] \[K:b\.one\] \[BASE:absent\] B one\.$/m);
  const next = await bimri(root, newSubject(run, "b.two", "B two."));
  assertEquals(next.stdout, "R000001-Q002\n");
  assertEquals((await bimri(root, ["doctor"])).code, 0);
});

Deno.test("a commit cut short after its head is finished by the next writer of any run, so a later value on the key cannot strand it", async () => {
  for (const point of ["after-state", "after-view"]) {
    for (const next of ["start", "sync"]) {
      const root = await tempStore();
      const crashed = await startRun(root, "crashed");
      await must(root, newSubject(crashed, "k.same", "Value A."));
      const cut = await bimri(root, ["sync", "--run", crashed], { env: { BIMRI_FAULT: point } });
      assertEquals(cut.code, 86, point);
      const decision = () => readStoreJson(root, `decisions/${crashed}-Q001.json`);
      assertEquals(decision().outcome, "applying", point);
      const later = await startRun(root, "later");
      if (next === "start") {
        // As the reference's load does: the head proves the commit, so start finishes it.
        assertEquals(decision().outcome, "accepted", `${point}/${next}`);
      }
      await must(root, ["propose", "--run", later, "--key", "k.same", "--text", "Value B."]);
      await must(root, ["sync", "--run", later]);
      assertEquals(decision().outcome, "accepted", `${point}/${next}`);
      assertEquals(decision().revision, 1, `${point}/${next}`);
      assertEquals(decision().recovered_from_intent, true, `${point}/${next}`);
      // The crashed run syncs and closes normally; Value B stands.
      const retry = await bimri(root, ["sync", "--run", crashed]);
      assertEquals(retry.code, 0, `${point}/${next}: ${retry.stderr}`);
      await must(root, ["close", "--run", crashed, "--outcome", "success"]);
      assertEquals(memoryLines(root).length, 1);
      assertMatch(memoryLines(root)[0], /\[K:k\.same\].* Value B\./);
      const doctor = await bimri(root, ["doctor", "--read-only"]);
      assertEquals(doctor.code, 0, doctor.stdout);
      assertNotMatch(doctor.stdout, /unreferenced|applying/, `${point}/${next}`);
    }
  }
});
