import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, type CliResult, diffTrees, hashTree, startRun, tempStore } from "../helpers/cli.ts";
import { pathWithFirst, PYTHON, writeStandIn } from "../helpers/portable.ts";
import { join } from "node:path";

const HOST_LOCAL = [
  ".bimri/engine.lock",
  ".bimri/runtime.local.json",
  ".bimri/hooks.claude.local.json",
];

/** bimri.md and every path under .bimri/ except the host-local files. */
function memoryTree(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [path, hash] of hashTree(root)) {
    if (path !== "bimri.md" && !path.startsWith(".bimri/")) continue;
    if (HOST_LOCAL.includes(path)) continue;
    out.set(path, hash);
  }
  return out;
}

Deno.test("an existing v5 store without --quiescent is refused and nothing is created", async () => {
  const root = await tempStore("bimri-install-quiescent-");
  const run = await startRun(root);
  await bimri(root, ["journal", "--run", run, "--text", "Work before the update."]);
  const before = hashTree(root);
  const r = await bimri(root, ["install", "--target", root], { noRoot: true });
  assertEquals(r.code, 2);
  assertMatch(r.stderr, /^BIMRI ERROR: updating an existing v5\.1\.0 store requires .*--quiescent/);
  assertEquals(r.stdout, "");
  assertEquals(diffTrees(before, hashTree(root)), null);
});

Deno.test("code-only update leaves bimri.md and every record byte-identical, with a receipt", async () => {
  const root = await tempStore("bimri-install-update-");
  const run = await startRun(root);
  await bimri(root, ["journal", "--run", run, "--text", "Kept through the update."]);
  await bimri(root, ["close", "--run", run, "--outcome", "success", "--summary", "Done."]);
  const open = await startRun(root, "claude");
  Deno.writeTextFileSync(`${root}/CLAUDE.md`, "# Owner\n");
  const before = memoryTree(root);
  const r = await bimri(root, ["install", "--target", root, "--quiescent"], { noRoot: true });
  assertEquals(r.code, 0, r.stderr + r.stdout);
  assertMatch(r.stdout, /^Existing authority store v5\.1\.0 verified\.$/m);
  assertMatch(r.stdout, /^Accepted head unchanged: V000000 [0-9a-f]{64}\.$/m);
  assertMatch(r.stdout, /^Memory preservation: PASSED /m);
  assertMatch(r.stdout, /^Read-only doctor passed\.$/m);
  const receipt =
    /^Receipt: (\.bimri-update-backups\/[0-9]{8}-[0-9]{6}-[0-9a-f]{8})\/install-manifest\.json$/m
      .exec(r.stdout);
  assert(receipt, r.stdout);
  assertEquals(diffTrees(before, memoryTree(root)), null);
  const state = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/state.json`));
  assert(state.active_runs[open], "the open run stays open");
  const manifest = JSON.parse(
    Deno.readTextFileSync(`${root}/${receipt[1]}/install-manifest.json`),
  );
  assertEquals(manifest.mode, "code-only-update");
  assertEquals(manifest.status, "installed");
  assertEquals(manifest.before_tree_digest, manifest.after_tree_digest);
  assertEquals(manifest.before_state_sha256, manifest.after_state_sha256);
  assertEquals(
    Deno.readTextFileSync(`${root}/${receipt[1]}/state-v5.1.0-exact.json`),
    Deno.readTextFileSync(`${root}/.bimri/state.json`),
  );
  assertEquals(Deno.readTextFileSync(`${root}/${receipt[1]}/files/CLAUDE.md`), "# Owner\n");
  assertMatch(Deno.readTextFileSync(`${root}/CLAUDE.md`), /^# Owner\n\n<!-- BIMRI:START -->\n/);
  assert(JSON.parse(Deno.readTextFileSync(`${root}/.bimri/runtime.local.json`)).host_bound);
});

Deno.test("a store whose accepted head is broken is refused before any write", async () => {
  const root = await tempStore("bimri-install-broken-");
  await startRun(root);
  Deno.writeTextFileSync(`${root}/.bimri/revisions/V000000.md`, "tampered\n", { append: true });
  const before = hashTree(root);
  const r = await bimri(root, ["install", "--target", root, "--quiescent"], { noRoot: true });
  assertEquals(r.code, 2);
  assertMatch(r.stderr, /^BIMRI ERROR: .*head/);
  assertEquals(diffTrees(before, hashTree(root)), null);
});

async function python(args: string[], cwd: string): Promise<CliResult> {
  const out = await new Deno.Command(PYTHON, { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

Deno.test("bimri-engine.py becomes a launcher of the bound bimri; a reference engine file is kept in the backups", async () => {
  const REFERENCE = "# the reference engine's code would be here\n";
  // Code-only update of a v5 store.
  const root = await tempStore("bimri-install-launcher-");
  const run = await startRun(root);
  Deno.writeTextFileSync(`${root}/bimri-engine.py`, REFERENCE);
  const r = await bimri(root, ["install", "--target", root, "--quiescent"], { noRoot: true });
  assertEquals(r.code, 0, r.stderr + r.stdout);
  const receipt = /^Receipt: (\.bimri-update-backups\/[^/]+)\/install-manifest\.json$/m.exec(
    r.stdout,
  );
  assert(receipt, r.stdout);
  assertEquals(Deno.readTextFileSync(`${root}/${receipt[1]}/files/bimri-engine.py`), REFERENCE);
  const manifest = JSON.parse(Deno.readTextFileSync(`${root}/${receipt[1]}/install-manifest.json`));
  assertEquals(manifest.records["bimri-engine.py"].existed, true);
  const launcher = Deno.readTextFileSync(`${root}/bimri-engine.py`);
  assertMatch(launcher, /^#!\/usr\/bin\/env python3\n/);
  // It runs the recorded argv_prefix with the arguments, from anywhere, exit codes passed through.
  const elsewhere = await Deno.makeTempDir({ prefix: "bimri-launcher-cwd-" });
  const doctor = await python(
    [`${root}/bimri-engine.py`, "--root", root, "doctor", "--read-only"],
    elsewhere,
  );
  assertEquals(doctor.code, 0, doctor.stderr);
  assertMatch(doctor.stdout, /BIMRI doctor \(read-only\): PASSED/);
  // Without --root, the memory beside the launcher.
  const journal = await python([
    `${root}/bimri-engine.py`,
    "journal",
    "--run",
    run,
    "--text",
    "Via the launcher.",
  ], elsewhere);
  assertEquals([journal.code, journal.stdout], [0, `${run}-E001\n`], journal.stderr);
  const missing = await python(
    [`${root}/bimri-engine.py`, "get", "--key", "no.such-key"],
    elsewhere,
  );
  assertEquals(missing.code, 1, missing.stderr);
  const bad = await python(
    [`${root}/bimri-engine.py`, "propose", "--trust", "contested"],
    elsewhere,
  );
  assertEquals(bad.code, 2);
  // No binding: a clear refusal, nothing run.
  Deno.removeSync(`${root}/.bimri/runtime.local.json`);
  const unbound = await python([`${root}/bimri-engine.py`, "status"], elsewhere);
  assertEquals([unbound.code, unbound.stdout], [2, ""]);
  assertMatch(unbound.stderr, /^BIMRI ERROR: .*runtime\.local\.json is missing.*install/);
  // A fresh install backs a same-named file up before replacing it.
  const fresh = await tempStore("bimri-install-launcher-fresh-");
  Deno.writeTextFileSync(`${fresh}/bimri-engine.py`, REFERENCE);
  const f = await bimri(fresh, ["install", "--target", fresh], { noRoot: true });
  assertEquals(f.code, 0, f.stderr + f.stdout);
  const backups = /^Backups of touched files: (\S+)$/m.exec(f.stdout);
  assert(backups, f.stdout);
  assertEquals(Deno.readTextFileSync(`${fresh}/${backups[1]}/bimri-engine.py`), REFERENCE);
  assertEquals(Deno.readTextFileSync(`${fresh}/bimri-engine.py`), launcher);
  for (const path of [root, fresh, elsewhere]) await Deno.remove(path, { recursive: true });
});

Deno.test("the binding names the launcher as engine_path; a binding from another machine falls back to bimri on PATH", async () => {
  const root = await tempStore("bimri-install-moved-binding-");
  const r = await bimri(root, ["install", "--target", root], { noRoot: true });
  assertEquals(r.code, 0, r.stderr + r.stdout);
  const bindingPath = join(root, ".bimri", "runtime.local.json");
  const binding = JSON.parse(Deno.readTextFileSync(bindingPath));
  assertEquals(binding.engine_path, join(Deno.realPathSync(root), "bimri-engine.py"));
  // The folder now carries a binding written on another machine.
  binding.argv_prefix = ["C:\\Old Host\\bimri.exe"];
  Deno.writeTextFileSync(bindingPath, JSON.stringify(binding));
  const elsewhere = await Deno.makeTempDir({ prefix: "bimri-launcher-path-" });
  const stranded = await python([join(root, "bimri-engine.py"), "status"], elsewhere);
  assertEquals([stranded.code, stranded.stdout], [2, ""]);
  assertMatch(
    stranded.stderr,
    /^BIMRI ERROR: cannot run C:\\Old Host\\bimri\.exe: it is not on this machine\. .*install/,
  );
  // With a bimri on PATH, the launcher runs that one and says so (on Windows
  // the stand-in is bimri.cmd, which Python's which() finds through PATHEXT).
  const bin = join(elsewhere, "bin");
  Deno.mkdirSync(bin);
  writeStandIn(bin, "bimri", "stand-in bimri:");
  const out = await new Deno.Command(PYTHON, {
    args: [join(root, "bimri-engine.py"), "status"],
    cwd: elsewhere,
    env: { PATH: pathWithFirst(bin) },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  assertEquals([out.code, d.decode(out.stdout).replaceAll("\r\n", "\n")], [
    0,
    "stand-in bimri: status\n",
  ]);
  const found = join(bin, "bimri").replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
  assertMatch(
    d.decode(out.stderr),
    new RegExp(
      `^BIMRI NOTICE: C:\\\\Old Host\\\\bimri\\.exe .* is not on this machine; running ${found}(?:\\.cmd)? instead\\.`,
      "i",
    ),
  );
  for (const path of [root, elsewhere]) await Deno.remove(path, { recursive: true });
});
