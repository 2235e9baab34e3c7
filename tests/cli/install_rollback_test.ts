import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, hashTree, tempStore } from "../helpers/cli.ts";

/** The tree without the install backups (the one thing a rolled-back install leaves). */
function withoutBackups(tree: Map<string, string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [path, hash] of tree) {
    if (path === ".bimri/" || path.startsWith(".bimri/install-backups")) continue;
    out.set(path, hash);
  }
  return out;
}

Deno.test("a failed self-check rolls back every touched path and names the exact backup folder", async () => {
  const target = await tempStore("bimri-install-rollback-");
  Deno.writeTextFileSync(`${target}/AGENTS.md`, "# Owner rules\n\nKeep me.\n");
  Deno.writeTextFileSync(`${target}/INSTALL.md`, "owner install notes\n");
  const before = hashTree(target);
  const r = await bimri(target, ["install", "--target", target], {
    noRoot: true,
    env: { BIMRI_FORCE_SELF_CHECK_FAILURE: "1" },
  });
  assertEquals(r.code, 2, r.stdout);
  assertEquals(r.stdout, "");
  const match =
    /^BIMRI ERROR: installation self-check failed; target files were rolled back\. Backups: (\.bimri\/install-backups\/[0-9]{8}-[0-9]{6}-[0-9a-f]{8})\. Cause: forced self-check failure/
      .exec(r.stderr);
  assert(match, r.stderr);
  const backup = `${target}/${match[1]}`;
  assertEquals(Deno.readTextFileSync(`${backup}/AGENTS.md`), "# Owner rules\n\nKeep me.\n");
  assertEquals(Deno.readTextFileSync(`${backup}/INSTALL.md`), "owner install notes\n");
  const manifest = JSON.parse(Deno.readTextFileSync(`${backup}/install-manifest.json`));
  assertEquals(manifest.status, "rolled-back");
  // Everything else is exactly as before: no store, no bindings, owner files restored.
  assertEquals([...withoutBackups(hashTree(target))], [...before]);
  assertEquals(
    [...Deno.readDirSync(`${target}/.bimri`)].map((e) => e.name).sort(),
    ["install-backups"],
  );
  // The same target installs cleanly afterwards.
  const ok = await bimri(target, ["install", "--target", target], { noRoot: true });
  assertEquals(ok.code, 0, ok.stderr);
  assertMatch(
    Deno.readTextFileSync(`${target}/AGENTS.md`),
    /^# Owner rules\n\nKeep me\.\n\n<!-- BIMRI:START -->\n/,
  );
});

Deno.test("a failed check during a code-only update restores the program files and names the receipt folder", async () => {
  const target = await tempStore("bimri-update-rollback-");
  const run = await bimri(target, ["start", "--actor", "codex"]);
  assertEquals(run.code, 0, run.stderr);
  Deno.writeTextFileSync(`${target}/AGENTS.md`, "# mine\n");
  const before = hashTree(target);
  const r = await bimri(target, ["install", "--target", target, "--quiescent"], {
    noRoot: true,
    env: { BIMRI_FORCE_SELF_CHECK_FAILURE: "1" },
  });
  assertEquals(r.code, 2);
  const match =
    /^BIMRI ERROR: code-only update failed; the program files were rolled back and memory was not changed\. Backups: (\.bimri-update-backups\/[0-9]{8}-[0-9]{6}-[0-9a-f]{8})\./
      .exec(r.stderr);
  assert(match, r.stderr);
  const manifest = JSON.parse(Deno.readTextFileSync(`${target}/${match[1]}/install-manifest.json`));
  assertEquals(manifest.status, "rolled-back");
  const after = new Map(
    [...hashTree(target)].filter(([path]) => !path.startsWith(".bimri-update-backups")),
  );
  assertEquals([...after], [...before]);
});
