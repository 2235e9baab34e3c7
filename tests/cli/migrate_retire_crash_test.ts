/**
 * A legacy migration killed once its state was durable, but before it retired
 * the old root files, is finished by the next writing command (`start`,
 * `status`, plain `doctor`...), by `migrate` or by `install`, as the
 * reference finishes it when it loads the store: the retired files equal the
 * preserved copies the migration record names, so removing them loses
 * nothing. Readers never write: they refuse until a writer has finished it.
 * Old root files nothing claims stop every command (legacy_root_test.ts).
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, pathExists } from "../helpers/cli.ts";
import { copyFixture } from "../fixtures/fixtures.ts";

async function crashAfterState(verb: string[]): Promise<string> {
  const root = await copyFixture("legacy-v3");
  const crashed = await bimri(root, verb, {
    env: { BIMRI_FAULT: "legacy-after-state" },
    noRoot: verb[0] === "install",
  });
  assertEquals(crashed.code, 86, crashed.stderr);
  assert(pathExists(join(root, "BIMRI.md")));
  assert(pathExists(join(root, "BIMRI-backup.md")));
  return root;
}

function assertRetired(root: string, head = 0): void {
  assert(!pathExists(join(root, "BIMRI.md")));
  assert(!pathExists(join(root, "BIMRI-backup.md")));
  const state = JSON.parse(Deno.readTextFileSync(join(root, ".bimri/state.json")));
  assertEquals(state.head_revision, head);
  assertEquals(
    Deno.readTextFileSync(join(root, "bimri.md")),
    Deno.readTextFileSync(join(root, `.bimri/revisions/V00000${head}.md`)),
  );
}

async function assertDoctorPasses(root: string): Promise<void> {
  const doctor = await bimri(root, ["doctor"]);
  assertEquals(doctor.code, 0, doctor.stdout + doctor.stderr);
  assertMatch(doctor.stdout, /^BIMRI doctor: PASSED/);
}

Deno.test("the next agent's start finishes retiring legacy root files, then works", async () => {
  const root = await crashAfterState(["migrate"]);
  const sources = [...Deno.readDirSync(join(root, ".bimri/backups"))].length;
  const start = await bimri(root, ["start", "--actor", "a", "--session", "s"]);
  assertEquals(start.code, 0, start.stderr);
  assertRetired(root);
  // The preserved copies stay.
  assertEquals([...Deno.readDirSync(join(root, ".bimri/backups"))].length, sources);
  const run = /^BIMRI RUN HANDLE: (R\d{6})$/m.exec(start.stdout)![1];
  const propose = await bimri(root, [
    "propose",
    "--run",
    run,
    "--key",
    "k.after",
    "--new-subject",
    "--tier",
    "2",
    "--importance",
    "2",
    "--status",
    "active",
    "--text",
    "after the crash",
  ]);
  assertEquals(propose.code, 0, propose.stderr);
  assertEquals((await bimri(root, ["sync", "--run", run])).code, 0);
  assertEquals((await bimri(root, ["close", "--run", run])).code, 0);
  assertRetired(root, 1);
  await assertDoctorPasses(root);
});

Deno.test("a reader refuses a pending retirement and writes nothing; status finishes it", async () => {
  const root = await crashAfterState(["migrate"]);
  const before = Deno.readFileSync(join(root, "BIMRI.md"));
  const get = await bimri(root, ["get", "--key", "anything"]);
  assertEquals(get.code, 2, get.stdout);
  assertMatch(
    get.stderr,
    /has not yet retired its old root file\(s\): BIMRI-backup\.md, BIMRI\.md/,
  );
  assertEquals(Deno.readFileSync(join(root, "BIMRI.md")), before);
  const status = await bimri(root, ["status"]);
  assertEquals(status.code, 0, status.stderr);
  assertRetired(root);
  assertEquals((await bimri(root, ["get", "--key", "anything"])).code, 1);
});

Deno.test("files put back after the head moved on are still retired, the view kept", async () => {
  // Another engine moved the head while the files were away (simulated: moved
  // aside during a bimri session); they still equal the preserved copies.
  const root = await crashAfterState(["migrate"]);
  const aside = await Deno.makeTempDir();
  for (const name of ["BIMRI.md", "BIMRI-backup.md"]) {
    Deno.renameSync(join(root, name), join(aside, name));
  }
  const start = await bimri(root, ["start", "--actor", "a"]);
  const run = /^BIMRI RUN HANDLE: (R\d{6})$/m.exec(start.stdout)![1];
  const args = ["propose", "--run", run, "--key", "k.after", "--new-subject", "--tier", "2"];
  assertEquals((await bimri(root, [...args, "--text", "moved on"])).code, 0);
  assertEquals((await bimri(root, ["sync", "--run", run])).code, 0);
  for (const name of ["BIMRI.md", "BIMRI-backup.md"]) {
    Deno.renameSync(join(aside, name), join(root, name));
  }
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 0, result.stdout + result.stderr);
  assertMatch(result.stdout, /retired legacy root files: BIMRI\.md, BIMRI-backup\.md/);
  assertRetired(root, 1);
  await assertDoctorPasses(root);
});

Deno.test("migrate finishes retiring legacy root files", async () => {
  const root = await crashAfterState(["migrate"]);
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 0, result.stdout + result.stderr);
  assertMatch(result.stdout, /retired legacy root files: BIMRI\.md, BIMRI-backup\.md/);
  assertRetired(root);
  await assertDoctorPasses(root);
});

Deno.test("install --quiescent finishes an interrupted install's legacy retirement", async () => {
  const root = await crashAfterState(["install", "--target", "."]);
  const result = await bimri(root, ["install", "--target", root, "--quiescent"], { noRoot: true });
  assertEquals(result.code, 0, result.stdout + result.stderr);
  assertRetired(root);
  await assertDoctorPasses(root);
});

Deno.test("a legacy root file edited after the migration is never retired", async () => {
  const root = await crashAfterState(["migrate"]);
  Deno.writeTextFileSync(join(root, "BIMRI-backup.md"), "edited by the owner\n");
  const state = Deno.readFileSync(join(root, ".bimri/state.json"));
  for (const verb of [["start", "--actor", "a"], ["migrate"]]) {
    const result = await bimri(root, verb);
    assertEquals(result.code, 2, result.stdout);
    assertMatch(result.stderr, /BIMRI-backup\.md changed after the legacy migration/);
  }
  assertEquals(Deno.readTextFileSync(join(root, "BIMRI-backup.md")), "edited by the owner\n");
  assert(pathExists(join(root, "BIMRI.md")));
  assertEquals(Deno.readFileSync(join(root, ".bimri/state.json")), state);
});

Deno.test("a legacy migration killed while writing a backup copy completes on retry", async () => {
  // An atomic write killed before its rename leaves its temporary file
  // (.bimri-new-*) beside the copies. It is no history: the retry must finish.
  const root = await copyFixture("legacy-v3");
  const source = Deno.readFileSync(join(root, "BIMRI-backup.md"));
  Deno.mkdirSync(join(root, ".bimri/backups"), { recursive: true });
  Deno.writeFileSync(
    join(root, ".bimri/backups/.bimri-new-0123456789abcdef"),
    source.slice(0, 100),
  );
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 0, result.stdout + result.stderr);
  assertMatch(result.stdout, /Validation: PASSED\./);
  assert(!pathExists(join(root, "BIMRI.md")));
  await assertDoctorPasses(root);
});
