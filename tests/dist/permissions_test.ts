/**
 * The permission set: every compile target gets the same flags, the test
 * helper runs the CLI with exactly those flags, the engine works with them and
 * needs each of them, and network access is denied to it.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { RUN_PERMISSIONS, tempStore } from "../helpers/cli.ts";
import { RUN_PERMISSIONS as CANONICAL_PERMISSIONS } from "../../engine/install/permissions.ts";
import {
  COMPILE_TARGETS,
  denoTasks,
  permissionFlags,
  registeredVerbs,
  REPO_ROOT,
  runProcess,
  smokeSession,
} from "./dist_helpers.ts";

const MAIN_TS = join(REPO_ROOT, "main.ts");

Deno.test("every compile task uses the permission set the tests run with", () => {
  // One list: the installer's canonical set, the test helper's, and each compile task's.
  assertEquals([...CANONICAL_PERMISSIONS], RUN_PERMISSIONS);
  const tasks = denoTasks();
  const chained = tasks.compile.split("&&").map((part) => part.trim());
  assertEquals(chained, COMPILE_TARGETS.map((t) => `deno task compile:${t}`));
  const targets: Record<string, string> = {
    "linux-x64": "x86_64-unknown-linux-gnu",
    "linux-arm64": "aarch64-unknown-linux-gnu",
    "macos-x64": "x86_64-apple-darwin",
    "macos-arm64": "aarch64-apple-darwin",
    "windows-x64": "x86_64-pc-windows-msvc",
  };
  for (const name of COMPILE_TARGETS) {
    const task = tasks[`compile:${name}`];
    assert(task, `deno.json has no compile:${name} task`);
    assertMatch(task, /^deno compile /);
    // The executable may also serve the owner's console (`bimri ui`) on loopback only; the
    // installed deno-run binding asks for that permission when the console starts.
    assertEquals(
      permissionFlags(task),
      [...RUN_PERMISSIONS, "--allow-net=127.0.0.1"],
      `compile:${name}`,
    );
    assertMatch(task, new RegExp(`--target ${targets[name]} `));
    assertMatch(task, /--output dist\/bimri-[a-z0-9_]+-[a-z]+(\.exe)? main\.ts$/);
    assert(
      !/--allow-net(?!=127\.0\.0\.1 )|--allow-(all|ffi|sys)|\s-A\s/.test(task),
      `compile:${name} grants too much`,
    );
  }
});

Deno.test("the engine runs a whole session with exactly the compile flags and no prompt", async () => {
  const root = await tempStore("bimri-perm-");
  const verbs = await registeredVerbs(RUN_PERMISSIONS);
  await smokeSession(
    [Deno.execPath(), "run", "--quiet", "--no-prompt", ...RUN_PERMISSIONS, MAIN_TS],
    root,
    verbs,
  );
  await Deno.remove(root, { recursive: true });
});

Deno.test("each flag of the set is needed: without it a real command is refused", async () => {
  const deno = Deno.execPath();
  const without = (flag: string) => RUN_PERMISSIONS.filter((f) => f !== flag);
  const run = (flags: string[], args: string[], cwd: string) =>
    runProcess(deno, ["run", "--quiet", "--no-prompt", ...flags, MAIN_TS, ...args], { cwd });
  const root = await tempStore("bimri-perm-need-");

  const noWrite = await run(
    without("--allow-write"),
    ["--root", root, "start", "--actor", "codex"],
    root,
  );
  assertEquals(noWrite.code, 2, noWrite.stdout);
  assertMatch(noWrite.stderr, /^BIMRI ERROR: .*write access/m);

  const noRead = await run(without("--allow-read"), ["--root", root, "status"], root);
  assertEquals(noRead.code, 2, noRead.stdout);
  assertMatch(noRead.stderr, /^BIMRI ERROR: .*read access/m);

  // The default root comes from BIMRI_ROOT: resolving it needs the environment.
  const noEnv = await run(without("--allow-env"), ["status"], root);
  assertEquals(noEnv.code, 2, noEnv.stdout);
  assertMatch(noEnv.stderr, /^BIMRI ERROR: .*(env|BIMRI_ROOT)/im);

  // The installer proves the command it binds by running it: that is what --allow-run is for.
  const target = await tempStore("bimri-perm-run-");
  const noRun = await run(without("--allow-run"), ["install", "--target", target], target);
  assertEquals(noRun.code, 2, noRun.stdout);
  assertMatch(noRun.stderr, /^BIMRI ERROR: .*run access/m);
  assertEquals([...Deno.readDirSync(target)], [], "a refused install wrote into the target");
  await Deno.remove(target, { recursive: true });
  await Deno.remove(root, { recursive: true });
});

/** A script that loads the engine with the given flags, runs a command in-process, then tries the network. */
function probeScript(root: string, port: number): string {
  return `
import { runCli } from ${JSON.stringify(pathToFileURL(MAIN_TS).href)};
const code = await runCli(["--root", ${JSON.stringify(root)}, "start", "--actor", "codex"]);
let network = "allowed";
try {
  const response = await fetch("http://127.0.0.1:${port}/");
  await response.body?.cancel();
} catch (error) {
  network = error instanceof Deno.errors.NotCapable ? "NotCapable" : "other: " + String(error);
}
const state = (await Deno.permissions.query({ name: "net", host: "127.0.0.1:${port}" })).state;
console.log("PROBE " + JSON.stringify({ code, network, state }));
`;
}

Deno.test("with the compile flags the engine works but network access is denied", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("up"),
  );
  const deno = Deno.execPath();
  const probe = async (extra: string[]) => {
    const root = await tempStore("bimri-perm-net-");
    const result = await runProcess(
      deno,
      ["run", "--quiet", "--no-prompt", ...RUN_PERMISSIONS, ...extra, "-"],
      { cwd: root, stdin: probeScript(root, server.addr.port) },
    );
    assertEquals(result.code, 0, result.stderr);
    assert(
      Deno.statSync(join(root, ".bimri", "state.json")).isFile,
      "the engine did not write its store",
    );
    await Deno.remove(root, { recursive: true });
    const line = result.stdout.split("\n").find((l) => l.startsWith("PROBE "));
    assert(line, result.stdout);
    return JSON.parse(line.slice(6)) as { code: number; network: string; state: string };
  };
  try {
    const denied = await probe([]);
    assertEquals(denied, { code: 0, network: "NotCapable", state: "prompt" });
    // Control: the probe can see the network when it is granted, so the denial above is real.
    const granted = await probe(["--allow-net=127.0.0.1"]);
    assertEquals(granted, { code: 0, network: "allowed", state: "granted" });
  } finally {
    await server.shutdown();
  }
});
