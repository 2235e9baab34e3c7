/**
 * What install writes into. Every folder it creates or writes into must be a
 * real folder inside the project: a symbolic link there is refused before the
 * first write, so nothing lands in the project or through the link. And an
 * upgrade that install commits is never reported as a failure to upgrade: a
 * v5.0.x store with a damaged authority record is upgraded, the install
 * finishes, and the damage is reported for the owner to repair.
 */
import { basename, join } from "node:path";
import { withoutPathHint } from "../helpers/install_notices.ts";
import { assert, assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree, pathExists, tempStore } from "../helpers/cli.ts";
import { copyFixture } from "../fixtures/fixtures.ts";

const V501 = "v5.0.1-custom";
const V502 = "reference-v5.0.2-populated";

/** Runs install into `root` (the target), as a user runs it from that folder. */
function install(root: string, quiescent: boolean, env: Record<string, string> = {}) {
  const args = ["install", "--target", root, ...(quiescent ? ["--quiescent"] : [])];
  return bimri(root, args, { noRoot: true, env });
}

/** A fresh folder outside the project, for a link to point at. */
function outsideFolder(): Promise<string> {
  return tempStore("bimri-outside-");
}

/**
 * Links `rel` of `root` to `outside`, runs install and requires a refusal
 * naming the link, with nothing written in the project or through the link.
 */
async function expectLinkRefused(
  root: string,
  rel: string,
  outside: string,
  quiescent: boolean,
): Promise<void> {
  Deno.symlinkSync(outside, join(root, rel), { type: "dir" });
  const before = hashTree(root);
  const r = await install(root, quiescent);
  assertEquals(r.code, 2, `${rel}: ${r.stdout}${r.stderr}`);
  assertEquals(diffTrees(before, hashTree(root)), null, `${rel}: install wrote in the project`);
  assertEquals([...Deno.readDirSync(outside)].length, 0, `${rel}: install wrote through the link`);
  assertEquals(r.stdout, "", rel);
  const name = rel.replaceAll(".", "\\.");
  assertMatch(
    r.stderr,
    new RegExp(
      `^BIMRI ERROR: target ${name} cannot be a symbolic link or reparse point: .*Replace it with a real folder or remove it, then install again\\. Nothing was changed\\.$`,
      "m",
    ),
    rel,
  );
}

Deno.test("install refuses a symbolic link at .bimri/install-backups and writes nothing, in the project or through the link", async () => {
  const root = await tempStore("bimri-install-linked-backups-");
  Deno.mkdirSync(join(root, ".bimri"));
  Deno.writeTextFileSync(join(root, "AGENTS.md"), "s\n");
  await expectLinkRefused(root, ".bimri/install-backups", await outsideFolder(), false);
});

Deno.test("a fresh install refuses a store folder linked out of the project before its backups", async () => {
  const root = await tempStore("bimri-install-linked-revisions-");
  Deno.mkdirSync(join(root, ".bimri"));
  await expectLinkRefused(root, ".bimri/revisions", await outsideFolder(), false);
});

Deno.test("install refuses a linked .bimri/backups of a v5.0.1 store before upgrading it", async () => {
  const root = await copyFixture(V501);
  await expectLinkRefused(root, ".bimri/backups", await outsideFolder(), true);
  const state = JSON.parse(Deno.readTextFileSync(join(root, ".bimri/state.json")));
  assertEquals(state.bimri_version, "5.0.1");
});

Deno.test("install refuses a symbolic link at .bimri-update-backups of a v5.0.x store, before even the engine lock", async () => {
  for (const fixture of [V501, V502]) {
    const root = await copyFixture(fixture);
    await expectLinkRefused(root, ".bimri-update-backups", await outsideFolder(), true);
  }
});

Deno.test("a fresh install refuses a linked bimri.md before creating .bimri or any backup", async () => {
  const root = await tempStore("bimri-install-linked-view-");
  const outside = await outsideFolder();
  Deno.writeTextFileSync(join(outside, "bimri.md"), "owner text\n");
  Deno.symlinkSync(join(outside, "bimri.md"), join(root, "bimri.md"), { type: "file" });
  const before = hashTree(root);
  const r = await install(root, false);
  assertEquals(r.code, 2, r.stdout + r.stderr);
  assertEquals(diffTrees(before, hashTree(root)), null, "install wrote in the project");
  assertEquals(Deno.readTextFileSync(join(outside, "bimri.md")), "owner text\n");
  assertMatch(
    r.stderr,
    /^BIMRI ERROR: refusing to install over bimri\.md: it is a symbolic link or not a regular file\. .*install again\. Nothing was changed\.$/m,
  );
});

/** The one update receipt folder of `root` (no preparing folder may be left). */
function onlyReceiptFolder(root: string): string {
  const names = [...Deno.readDirSync(join(root, ".bimri-update-backups"))].map((e) => e.name);
  assertEquals(names.length, 1, names.join(", "));
  assertMatch(names[0], /^[0-9]{8}-[0-9]{6}-[0-9a-f]{8}$/);
  return join(root, ".bimri-update-backups", names[0]);
}

/** The install manifests under .bimri/install-backups/ of `root`. */
function installManifests(root: string): Record<string, unknown>[] {
  const dir = join(root, ".bimri/install-backups");
  return [...Deno.readDirSync(dir)].map((e) =>
    JSON.parse(Deno.readTextFileSync(join(dir, e.name, "install-manifest.json")))
  );
}

Deno.test("install into a v5.0.1 store with a damaged conflict record upgrades it, finishes, and reports recovery required", async () => {
  const root = await copyFixture(V501);
  Deno.mkdirSync(join(root, ".bimri/conflicts"));
  Deno.writeTextFileSync(join(root, ".bimri/conflicts/C000001.json"), "{broken");
  const r = await install(root, true);
  assertEquals(r.code, 0, r.stdout + r.stderr);
  assertEquals(withoutPathHint(r.stderr), "");
  assertMatch(r.stdout, /^Memory: upgraded v5\.0\.1 to v5\.1\.0; limits preserved /m);
  assertMatch(r.stdout, /^DOCTOR: RECOVERY REQUIRED$/m);
  assertMatch(
    r.stdout,
    /^ {2}- authority recovery needed: conflict C000001 \(\.bimri\/conflicts\/C000001\.json\): is unreadable; BIMRI stopped without resetting it: it is not valid JSON\.$/m,
  );
  assertMatch(r.stdout, /^AUTHORITY RECOVERY NEEDED — /m);
  assertMatch(r.stdout, /^The repair tools remain installed: run `doctor` /m);
  assertNotMatch(r.stdout, /Doctor passed/);
  // The upgrade committed, and so did everything after it.
  const state = JSON.parse(Deno.readTextFileSync(join(root, ".bimri/state.json")));
  assertEquals([state.bimri_version, state.head_revision], ["5.1.0", 3]);
  assert(pathExists(join(root, ".bimri/revisions/V000003.md")), "metadata revision");
  for (const file of ["AGENTS.md", "CLAUDE.md", ".bimri/runtime.local.json"]) {
    assert(pathExists(join(root, file)), `${file} was not installed`);
  }
  assertEquals(Deno.readTextFileSync(join(root, ".bimri/conflicts/C000001.json")), "{broken");
  // The reference's upgrade route: the backups and the receipt of a
  // migration, under .bimri/install-backups/, not a code-only update's.
  const manifests = installManifests(root);
  assertEquals(manifests.map((m) => m.status), ["installed-recovery-required"]);
  assert(!pathExists(join(root, ".bimri-update-backups")), "no code-only update receipt");
  // The repair is the owner's; a second install (now a 5.1.0 code-only update) says the same.
  const again = await install(root, true);
  assertEquals(again.code, 0, again.stdout + again.stderr);
  assertMatch(again.stdout, /^READ-ONLY AUDIT: RECOVERY REQUIRED$/m);
});

Deno.test("install into a v5.0.2 store with a damaged conflict record activates it and publishes one receipt folder", async () => {
  const root = await copyFixture(V502);
  Deno.writeTextFileSync(join(root, ".bimri/conflicts/C000009.json"), "{broken");
  const r = await install(root, true);
  assertEquals(r.code, 0, r.stdout + r.stderr);
  assertMatch(r.stdout, /^Authority store activated from v5\.0\.2 to v5\.1\.0; /m);
  assertMatch(r.stdout, /^READ-ONLY AUDIT: RECOVERY REQUIRED$/m);
  assertMatch(r.stdout, /^AUTHORITY RECOVERY NEEDED — /m);
  const folder = onlyReceiptFolder(root);
  const manifest = JSON.parse(Deno.readTextFileSync(join(folder, "install-manifest.json")));
  assertEquals(manifest.status, "installed-recovery-required");
  assertEquals(manifest.mode, "lossless-authority-activation");
  const activation = JSON.parse(Deno.readTextFileSync(join(folder, "activation-receipt.json")));
  assertEquals(activation.transaction, basename(folder));
  assert(pathExists(join(root, ".bimri/runtime.local.json")), "runtime binding");
});

Deno.test("a failed self-check after a v5.0.1 upgrade rolls the upgrade back with everything else", async () => {
  const root = await copyFixture(V501);
  const before = hashTree(root);
  const r = await install(root, true, { BIMRI_FORCE_SELF_CHECK_FAILURE: "1" });
  assertEquals(r.code, 2, r.stdout + r.stderr);
  assertMatch(
    r.stderr,
    /^BIMRI ERROR: installation self-check failed; target files were rolled back\. Backups: \.bimri\/install-backups\/[^ ]+\. Cause: forced self-check failure/,
  );
  // Only the backup folder (with its rolled-back receipt) and the engine's lock file are new.
  const after = new Map(
    [...hashTree(root)].filter(([path]) =>
      !path.startsWith(".bimri/install-backups/") && path !== ".bimri/engine.lock"
    ),
  );
  assertEquals(diffTrees(before, after), null);
  assertEquals(installManifests(root).map((m) => m.status), ["rolled-back"]);
  const state = JSON.parse(Deno.readTextFileSync(join(root, ".bimri/state.json")));
  assertEquals(state.bimri_version, "5.0.1");
  assert(!pathExists(join(root, "AGENTS.md")), "program files rolled back");
});

Deno.test("install refuses a v4 store beside a distinct legacy BIMRI.md before taking any backup", async () => {
  const root = await tempStore("bimri-install-v4-unclaimed-");
  Deno.mkdirSync(join(root, ".bimri"));
  Deno.writeTextFileSync(
    join(root, ".bimri/state.json"),
    JSON.stringify({ bimri_version: "4.0", project_id: "v4-unclaimed", run_count: 0 }, null, 2) +
      "\n",
  );
  Deno.writeTextFileSync(join(root, "bimri.md"), "# BIMRI\n");
  Deno.writeTextFileSync(
    join(root, "BIMRI.md"),
    "<!-- BIMRI v3.0 | Last Maintained: 2026-07-20 | Sessions: 1 -->\n# BIMRI: Memory File\n## Tier 1: Core Intelligence\n- Competing memory.\n",
  );
  const before = hashTree(root);
  const r = await install(root, false);
  assertEquals(r.code, 2, r.stdout + r.stderr);
  assertMatch(r.stderr, /unclaimed legacy root file\(s\): BIMRI\.md/);
  assertEquals(diffTrees(before, hashTree(root)), null, "install wrote in the project");
});
