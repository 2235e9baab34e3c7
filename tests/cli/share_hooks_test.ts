/**
 * `bimri share hooks`: git hooks that pull team memory after git changes the
 * working tree and stage `.bimri-share/` on commit, chaining hooks already
 * there (a hook file, core.hooksPath), never failing git because of bimri,
 * and removed cleanly.
 */
import { join } from "node:path";
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { bimri, must, pathExists } from "../helpers/cli.ts";
import { agentSets, git, gitOk, publish, sharedClones, textOf } from "../helpers/share.ts";

function writeHook(path: string, body: string): string {
  // POSIX-only: git runs every hook with sh, also Git for Windows (its bundled sh), so a hook is an sh script everywhere.
  const text = `#!/bin/sh\n${body}\n`;
  Deno.writeTextFileSync(path, text);
  if (Deno.build.os !== "windows") Deno.chmodSync(path, 0o755);
  return text;
}

async function sharedPair(): Promise<{ a: string; b: string }> {
  const { clones: [a, b] } = await sharedClones({ "k.seed": "Seed." });
  return { a, b };
}

Deno.test("hooks pull after git pull and stage records on commit; an existing hook is kept, still runs, and comes back on uninstall", async () => {
  const { a, b } = await sharedPair();
  const hooks = join(b, ".git", "hooks");
  const original = writeHook(
    join(hooks, "pre-commit"),
    `echo ran >> "$(git rev-parse --show-toplevel)/../pre-commit-ran"`,
  );
  const installed = await must(b, ["share", "hooks", "install"]);
  match(installed, /pre-commit {2}installed \(runs the existing hook first\)/);
  match(installed, /post-merge {2}installed/);
  const json = JSON.parse(await must(b, ["share", "hooks", "status", "--json"]));
  ok(json.hooks.every((h: { installed: boolean }) => h.installed));

  // pre-commit stages the records: a plain commit of other work carries them.
  await agentSets(b, "claude", { "k.fromb": "From b." });
  Deno.writeTextFileSync(join(b, "notes.txt"), "work\n");
  await gitOk(b, ["add", "notes.txt"]);
  await gitOk(b, ["commit", "-q", "-m", "work"]);
  const shown = await gitOk(b, ["show", "--name-only", "--format=", "HEAD"]);
  match(shown, /\.bimri-share\/[a-z2-7]{26}\/00000001\.json/);
  ok(pathExists(join(b, "..", "pre-commit-ran")), "the existing pre-commit hook ran");
  strictEqual((await gitOk(b, ["status", "--porcelain"])).trim(), "");
  await gitOk(b, ["push", "-q", "origin", "HEAD:main"]);

  // post-merge pulls: after git pull in b, a's new record is imported with no bimri command.
  await agentSets(a, "codex", { "k.froma": "From a." });
  await publish(a, "a learned");
  await gitOk(b, ["pull", "-q", "--no-edit", "origin", "main"]);
  strictEqual(await textOf(b, "k.froma"), "From a.");

  // bimri failing never fails git: one line on stderr, the commit is made.
  const state = join(b, ".bimri", "share.local.json");
  const saved = Deno.readTextFileSync(state);
  Deno.writeTextFileSync(state, "{broken");
  Deno.writeTextFileSync(join(b, "notes.txt"), "more\n");
  const commit = await git(b, ["commit", "-q", "-am", "more work"]);
  strictEqual(commit.code, 0, commit.out);
  match(
    commit.out,
    /^bimri: staging \.bimri-share\/ failed in the git pre-commit hook .*git was not affected/m,
  );
  strictEqual(commit.out.trim().split("\n").filter((l) => l.startsWith("bimri:")).length, 1);
  Deno.writeTextFileSync(state, saved);

  // Uninstall: bimri's hooks gone, the original hook back byte for byte.
  await must(b, ["share", "hooks", "uninstall"]);
  strictEqual(Deno.readTextFileSync(join(hooks, "pre-commit")), original);
  for (const name of ["post-merge", "post-checkout", "post-rewrite", "pre-commit.bimri-chained"]) {
    ok(!pathExists(join(hooks, name)), name);
  }
  const status = JSON.parse(await must(b, ["share", "hooks", "status", "--json"]));
  deepStrictEqual(status.hooks.map((h: { installed: boolean }) => h.installed), [
    false,
    false,
    false,
    false,
  ]);
});

Deno.test("hooks follow core.hooksPath and chain the hook found there; rebase pulls run them too", async () => {
  const { a, b } = await sharedPair();
  await gitOk(b, ["config", "core.hooksPath", ".githooks"]);
  Deno.mkdirSync(join(b, ".githooks"));
  writeHook(
    join(b, ".githooks", "post-merge"),
    `echo merged >> "$(git rev-parse --show-toplevel)/../post-merge-ran"`,
  );
  const installed = await must(b, ["share", "hooks", "install"]);
  match(installed, new RegExp(`BIMRI SHARE HOOKS: ${b}/\\.githooks`));
  ok(pathExists(join(b, ".githooks", "post-rewrite")));
  ok(!pathExists(join(b, ".git", "hooks", "post-merge")));
  await agentSets(a, "codex", { "k.one": "One." });
  await publish(a, "a learned");
  await gitOk(b, ["pull", "-q", "--no-edit", "origin", "main"]);
  strictEqual(await textOf(b, "k.one"), "One.");
  ok(pathExists(join(b, "..", "post-merge-ran")));
  // A rebase pull (post-rewrite / post-checkout) imports as well.
  Deno.writeTextFileSync(join(b, "local.txt"), "b\n");
  await gitOk(b, ["add", "local.txt"]);
  await gitOk(b, ["commit", "-q", "-m", "b local"]);
  await agentSets(a, "codex", { "k.two": "Two." });
  await publish(a, "a learned more");
  await gitOk(b, ["pull", "-q", "--rebase", "origin", "main"]);
  strictEqual(await textOf(b, "k.two"), "Two.");
  const doctor = await bimri(b, ["doctor", "--read-only"]);
  strictEqual(doctor.code, 0, doctor.stdout);
});
