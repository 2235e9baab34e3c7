/**
 * A legacy migration killed once its state was durable, but before it retired
 * the old root files, is finished by the next migrate (or install) even when
 * agents committed in between: the retired files equal the preserved copies
 * the migration record names, so removing them loses nothing. Before, the
 * leftover files made doctor fail ("unclaimed legacy root files") and migrate
 * refused, with no step that worked short of deleting them by hand.
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
  // Agents keep working before anyone reruns the migration: a commit moves the head.
  const start = await bimri(root, ["start", "--actor", "a", "--session", "s"]);
  assertEquals(start.code, 0, start.stderr);
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
  return root;
}

function assertRetired(root: string): void {
  assert(!pathExists(join(root, "BIMRI.md")));
  assert(!pathExists(join(root, "BIMRI-backup.md")));
  const state = JSON.parse(Deno.readTextFileSync(join(root, ".bimri/state.json")));
  assertEquals(state.head_revision, 1);
  assertEquals(
    Deno.readTextFileSync(join(root, "bimri.md")),
    Deno.readTextFileSync(join(root, ".bimri/revisions/V000001.md")),
  );
}

Deno.test("migrate finishes retiring legacy root files after the head moved on", async () => {
  const root = await crashAfterState(["migrate"]);
  const sources = [...Deno.readDirSync(join(root, ".bimri/backups"))].length;
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 0, result.stdout + result.stderr);
  assertMatch(result.stdout, /retired legacy root files: BIMRI\.md, BIMRI-backup\.md/);
  assertRetired(root);
  // The preserved copies stay.
  assertEquals([...Deno.readDirSync(join(root, ".bimri/backups"))].length, sources);
  const doctor = await bimri(root, ["doctor"]);
  assertEquals(doctor.code, 0, doctor.stdout);
  assertMatch(doctor.stdout, /^BIMRI doctor: PASSED/);
});

Deno.test("install --quiescent finishes an interrupted install's legacy retirement", async () => {
  const root = await crashAfterState(["install", "--target", "."]);
  const result = await bimri(root, ["install", "--target", root, "--quiescent"], { noRoot: true });
  assertEquals(result.code, 0, result.stdout + result.stderr);
  assertRetired(root);
  const doctor = await bimri(root, ["doctor"]);
  assertEquals(doctor.code, 0, doctor.stdout);
  assertMatch(doctor.stdout, /^BIMRI doctor: PASSED/);
});

Deno.test("a legacy root file edited after the migration is never retired", async () => {
  const root = await crashAfterState(["migrate"]);
  Deno.writeTextFileSync(join(root, "BIMRI-backup.md"), "edited by the owner\n");
  const result = await bimri(root, ["migrate"]);
  assertEquals(result.code, 2);
  assertMatch(result.stderr, /BIMRI-backup\.md changed after the legacy migration/);
  assertEquals(Deno.readTextFileSync(join(root, "BIMRI-backup.md")), "edited by the owner\n");
  assert(pathExists(join(root, "BIMRI.md")));
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
  const doctor = await bimri(root, ["doctor"]);
  assertEquals(doctor.code, 0, doctor.stdout);
});
