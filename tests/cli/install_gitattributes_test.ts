/**
 * Install merges a `.gitattributes` block that keeps bimri.md and `.bimri/`
 * byte-exact in git (`-text -eol`), like the AGENTS.md block: the owner's
 * lines stay, their previous file is kept in the backups, a second install
 * changes nothing, a linked file is refused, and a clone made with
 * `core.autocrlf=true` (Git for Windows' default) still opens.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree, pathExists, startRun, tempStore } from "../helpers/cli.ts";
import { gitOk } from "../helpers/share.ts";
import { GITATTRIBUTES_BACKUP, gitattributesText } from "../../engine/install/gitattributes.ts";

const BLOCK = gitattributesText(null);

async function install(root: string, quiescent = false) {
  const args = ["install", "--target", root, ...(quiescent ? ["--quiescent"] : [])];
  const r = await bimri(root, args, { noRoot: true });
  assertEquals(r.code, 0, r.stdout + r.stderr);
  return r;
}

/** The one backup folder of the fresh route. */
function installBackup(root: string): string {
  const names = [...Deno.readDirSync(join(root, ".bimri", "install-backups"))].map((e) => e.name);
  assertEquals(names.length, 1, names.join(", "));
  return join(root, ".bimri", "install-backups", names[0]);
}

Deno.test("a fresh install writes the .gitattributes block for bimri.md and .bimri/", async () => {
  const root = await tempStore("bimri-gitattributes-fresh-");
  await install(root);
  const text = Deno.readTextFileSync(join(root, ".gitattributes"));
  assertEquals(text, BLOCK);
  assertMatch(
    text,
    /^# BIMRI:START\n(?:.*\n)*bimri\.md -text -eol\n\.bimri\/\*\* -text -eol\n# BIMRI:END\n$/,
  );
  assert(!pathExists(join(installBackup(root), GITATTRIBUTES_BACKUP)), "nothing to back up");
});

Deno.test("the owner's .gitattributes keeps its lines; the old file is backed up; a second install changes nothing", async () => {
  const root = await tempStore("bimri-gitattributes-owner-");
  const owner = "# owner rules\n*.png binary\n*.sh text eol=lf\n";
  Deno.writeTextFileSync(join(root, ".gitattributes"), owner);
  await install(root);
  const merged = Deno.readTextFileSync(join(root, ".gitattributes"));
  assertEquals(merged, `${owner}\n${BLOCK}`);
  assertEquals(
    Deno.readTextFileSync(join(installBackup(root), GITATTRIBUTES_BACKUP)),
    owner,
  );
  // The code-only update of the same store: the block is current, nothing is rewritten.
  const before = Deno.statSync(join(root, ".gitattributes")).mtime;
  const r = await install(root, true);
  const receipt = /^Receipt: (\S+)\/install-manifest\.json$/m.exec(r.stdout);
  assert(receipt, r.stdout);
  assertEquals(Deno.readTextFileSync(join(root, ".gitattributes")), merged);
  assertEquals(Deno.statSync(join(root, ".gitattributes")).mtime, before);
  assert(!pathExists(join(root, receipt[1], GITATTRIBUTES_BACKUP)), "no backup when unchanged");
});

Deno.test("a stale BIMRI block is replaced in place, the owner's text around it kept", async () => {
  const root = await tempStore("bimri-gitattributes-stale-");
  await startRun(root);
  const stale = "*.png binary\n# BIMRI:START\nbimri.md text\n# BIMRI:END\n*.jpg binary\n";
  Deno.writeTextFileSync(join(root, ".gitattributes"), stale);
  const r = await install(root, true);
  const receipt = /^Receipt: (\S+)\/install-manifest\.json$/m.exec(r.stdout);
  assert(receipt, r.stdout);
  assertEquals(
    Deno.readTextFileSync(join(root, ".gitattributes")),
    `*.png binary\n${BLOCK.trimEnd()}\n*.jpg binary\n`,
  );
  assertEquals(Deno.readTextFileSync(join(root, receipt[1], GITATTRIBUTES_BACKUP)), stale);
});

Deno.test("a linked .gitattributes is refused before anything is written", async () => {
  const root = await tempStore("bimri-gitattributes-link-");
  const outside = await tempStore("bimri-gitattributes-outside-");
  Deno.writeTextFileSync(join(outside, "attributes"), "*.png binary\n");
  Deno.symlinkSync(join(outside, "attributes"), join(root, ".gitattributes"), { type: "file" });
  const before = hashTree(root);
  const r = await bimri(root, ["install", "--target", root], { noRoot: true });
  assertEquals(r.code, 2, r.stdout + r.stderr);
  assertMatch(
    r.stderr,
    /^BIMRI ERROR: refusing to write through \.gitattributes: it is a symbolic link/,
  );
  assertEquals(diffTrees(before, hashTree(root)), null);
  assertEquals(Deno.readTextFileSync(join(outside, "attributes")), "*.png binary\n");
});

Deno.test("a store committed and cloned with core.autocrlf=true keeps its bytes and opens", async () => {
  const root = await tempStore("bimri-gitattributes-git-");
  await install(root);
  const run = await startRun(root);
  assertEquals((await bimri(root, ["journal", "--run", run, "--text", "Line one."])).code, 0);
  assertEquals((await bimri(root, ["close", "--run", run, "--summary", "Done."])).code, 0);
  await gitOk(root, ["init", "-q"]);
  await gitOk(root, ["-c", "core.autocrlf=true", "add", "-A"]);
  await gitOk(root, ["-c", "core.autocrlf=true", "commit", "-q", "-m", "memory"]);
  const parent = await tempStore("bimri-gitattributes-clone-");
  await gitOk(parent, ["-c", "core.autocrlf=true", "clone", "-q", root, "clone"]);
  const clone = join(parent, "clone");
  assertEquals(
    Deno.readFileSync(join(clone, "bimri.md")),
    Deno.readFileSync(join(root, "bimri.md")),
  );
  assertEquals(
    Deno.readFileSync(join(clone, ".bimri", "state.json")),
    Deno.readFileSync(join(root, ".bimri", "state.json")),
  );
  const doctor = await bimri(clone, ["doctor"]);
  assertEquals(doctor.code, 0, doctor.stdout + doctor.stderr);
});
