/**
 * Install never replaces a project file that is not BIMRI's without saying so
 * (issue 45): a project's own INSTALL.md stays, BIMRI's guide goes to
 * BIMRI-INSTALL.md; any other foreign file it replaces is named loudly with
 * where the original went and how to restore it. Black-box through the CLI.
 */
import { join } from "node:path";
import { assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import { bimri, pathExists, tempStore } from "../helpers/cli.ts";
import { TEMPLATES } from "../../templates/mod.ts";

const OWN_GUIDE = "# Building Acme\n\nRun make.\n";

Deno.test("a project's own INSTALL.md is left unchanged; BIMRI's guide is written as BIMRI-INSTALL.md, on install and update", async () => {
  const target = await tempStore();
  Deno.writeTextFileSync(join(target, "INSTALL.md"), OWN_GUIDE);
  const r = await bimri(target, ["install", "--target", target]);
  assertEquals(r.code, 0, r.stderr);
  assertMatch(r.stdout, /^BIMRI 5\.1\.2 installed\.$/m);
  assertMatch(
    r.stdout,
    /^The project's own INSTALL\.md is not BIMRI's: it was left unchanged, and BIMRI's install guide was written as BIMRI-INSTALL\.md\.$/m,
  );
  assertMatch(r.stdout, /portable files written: .*BIMRI-INSTALL\.md/);
  assertEquals(Deno.readTextFileSync(join(target, "INSTALL.md")), OWN_GUIDE);
  assertEquals(Deno.readTextFileSync(join(target, "BIMRI-INSTALL.md")), TEMPLATES["INSTALL.md"]);
  const update = await bimri(target, ["install", "--target", target, "--quiescent"]);
  assertEquals(update.code, 0, update.stderr);
  assertEquals(Deno.readTextFileSync(join(target, "INSTALL.md")), OWN_GUIDE);
  assertMatch(update.stdout, /written as BIMRI-INSTALL\.md/);
});

Deno.test("a BIMRI INSTALL.md (an earlier copy) is replaced in place without a notice", async () => {
  const target = await tempStore();
  Deno.writeTextFileSync(join(target, "INSTALL.md"), "# Install BIMRI\n\nold reference guide\n");
  const r = await bimri(target, ["install", "--target", target]);
  assertEquals(r.code, 0, r.stderr);
  assertEquals(Deno.readTextFileSync(join(target, "INSTALL.md")), TEMPLATES["INSTALL.md"]);
  assertNotMatch(r.stdout, /REPLACED|BIMRI-INSTALL\.md/);
});

Deno.test("a foreign file install must replace is named loudly: what, where the original went, how to restore", async () => {
  const target = await tempStore();
  const own = '{"project": "my own hooks"}\n';
  Deno.writeTextFileSync(join(target, "hooks-example.json"), own);
  const r = await bimri(target, ["install", "--target", target]);
  assertEquals(r.code, 0, r.stderr);
  const m =
    /^REPLACED hooks-example\.json: .* The original is kept at (\S+); to restore it: cp '([^']+)' 'hooks-example\.json'\.$/m
      .exec(r.stdout);
  assertEquals(m !== null, true, r.stdout);
  assertEquals(m![1], m![2]);
  assertEquals(Deno.readTextFileSync(join(target, m![1])), own);
});

async function gitInit(dir: string): Promise<void> {
  const out = await new Deno.Command("git", { args: ["init", "-q"], cwd: dir }).output();
  assertEquals(out.code, 0);
}

Deno.test("in a git work tree install offers the .gitignore lines of its host-bound files; the printed command adds them", async () => {
  const target = await tempStore();
  await gitInit(target);
  const r = await bimri(target, ["install", "--target", target]);
  assertEquals(r.code, 0, r.stderr);
  const m = /^BIMRI: this is a git work tree: .* to \.gitignore, e\.g\. (printf .*)$/m.exec(
    r.stderr,
  );
  assertEquals(m !== null, true, r.stderr);
  assertMatch(
    r.stderr,
    /\.bimri-update-backups\/, \.bimri\/\*\.local\.json, \.claude\/settings\.local\.json/,
  );
  // install itself wrote no .gitignore; the printed command adds exactly the lines.
  assertEquals(pathExists(join(target, ".gitignore")), false);
  const sh = await new Deno.Command("sh", { args: ["-c", m![1]], cwd: target }).output();
  assertEquals(sh.code, 0);
  assertEquals(
    Deno.readTextFileSync(join(target, ".gitignore")),
    ".bimri-update-backups/\n.bimri/*.local.json\n.claude/settings.local.json\n",
  );
  const again = await bimri(target, ["install", "--target", target, "--quiescent"]);
  assertEquals(again.code, 0, again.stderr);
  assertNotMatch(again.stderr, /git work tree/);
  // git sees none of the host-bound files install made.
  const status = await new Deno.Command("git", {
    args: ["status", "--porcelain", "--untracked-files=all"],
    cwd: target,
    stdout: "piped",
  }).output();
  const listed = new TextDecoder().decode(status.stdout);
  assertNotMatch(listed, /\.bimri-update-backups|runtime\.local\.json|hooks\.claude\.local\.json/);
});

Deno.test("outside a git work tree install offers no .gitignore lines", async () => {
  const target = await tempStore();
  const r = await bimri(target, ["install", "--target", target]);
  assertEquals(r.code, 0, r.stderr);
  assertNotMatch(r.stderr, /git work tree|\.gitignore/);
});

Deno.test("an install or update that rolls back removes the BIMRI-INSTALL.md it wrote and keeps the project's INSTALL.md", async () => {
  const target = await tempStore();
  Deno.writeTextFileSync(join(target, "INSTALL.md"), OWN_GUIDE);
  const env = { BIMRI_FORCE_SELF_CHECK_FAILURE: "1" };
  const fresh = await bimri(target, ["install", "--target", target], { env });
  assertEquals(fresh.code, 2, fresh.stdout);
  assertEquals(pathExists(join(target, "BIMRI-INSTALL.md")), false);
  assertEquals(Deno.readTextFileSync(join(target, "INSTALL.md")), OWN_GUIDE);
  assertEquals((await bimri(target, ["install", "--target", target])).code, 0);
  Deno.removeSync(join(target, "BIMRI-INSTALL.md"));
  const update = await bimri(target, ["install", "--target", target, "--quiescent"], { env });
  assertEquals(update.code, 2, update.stdout);
  assertEquals(pathExists(join(target, "BIMRI-INSTALL.md")), false);
  assertEquals(Deno.readTextFileSync(join(target, "INSTALL.md")), OWN_GUIDE);
});
