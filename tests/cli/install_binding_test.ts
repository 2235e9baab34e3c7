import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, newSubject, tempStore } from "../helpers/cli.ts";

type Out = { code: number; stdout: string; stderr: string };

/** Variables a process needs to find its caches and temp folders, nothing that locates bimri. */
function passThrough(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["HOME", "DENO_DIR", "USERPROFILE", "SystemRoot", "TEMP", "TMP", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

async function run(argv: string[], cwd: string, stdin?: string): Promise<Out> {
  const [command, ...args] = argv;
  const child = new Deno.Command(command, {
    args,
    cwd,
    // A clean environment (no PATH): nothing but the recorded argv decides what runs.
    clearEnv: true,
    env: { ...passThrough(), TZ: "UTC", PATH: "/nonexistent" },
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const out = await child.output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

Deno.test("after install, one memory session runs only through the recorded argv_prefix and the rendered hooks", async () => {
  const target = await tempStore("bimri-install-binding-");
  const installed = await bimri(target, ["install", "--target", target], { noRoot: true });
  assertEquals(installed.code, 0, installed.stderr + installed.stdout);
  const runtime = JSON.parse(Deno.readTextFileSync(`${target}/.bimri/runtime.local.json`));
  const prefix: string[] = runtime.argv_prefix;
  const printed = /^Verified runtime \([a-z-]+\): (.*)$/m.exec(installed.stdout);
  assert(printed && printed[1].startsWith(prefix[0]), installed.stdout);
  const cli = (args: string[], stdin?: string) =>
    run([...prefix, "--root", target, ...args], target, stdin);

  const start = await cli(["start", "--actor", "codex"]);
  assertEquals(start.code, 0, start.stderr);
  const handle = /^BIMRI RUN HANDLE: (R[0-9]{6})$/m.exec(start.stdout);
  assert(handle, start.stdout);
  assertEquals(handle[1], "R000001"); // the installer's hook smoke test left no run
  const journal = await cli([
    "journal",
    "--run",
    handle[1],
    "--text",
    "Bound through the binding.",
  ]);
  assertEquals(journal.stdout, `${handle[1]}-E001\n`, journal.stderr);
  const help = await cli(["--help"]);
  if (/^\s+propose\s/m.test(help.stdout) && /^\s+sync\s/m.test(help.stdout)) {
    const proposed = await cli(
      newSubject(handle[1], "install.binding", "The recorded prefix runs bimri."),
    );
    assertEquals(proposed.code, 0, proposed.stderr);
    const synced = await cli(["sync", "--run", handle[1]]);
    assertMatch(synced.stdout, /applied 1/);
    assertMatch(Deno.readTextFileSync(`${target}/bimri.md`), /\[K:install\.binding\]/);
  }
  const closed = await cli([
    "close",
    "--run",
    handle[1],
    "--outcome",
    "success",
    "--summary",
    "ok",
  ]);
  assertMatch(closed.stdout, new RegExp(`^BIMRI: run ${handle[1]} closed\\.`, "m"));

  // The rendered Claude hooks, exactly as Claude Code would run them.
  const hooks = JSON.parse(Deno.readTextFileSync(`${target}/.bimri/hooks.claude.local.json`));
  const argvOf = (event: string) => {
    const hook = hooks.hooks[event][0].hooks[0];
    assertEquals(hook.type, "command");
    assertEquals(hook.timeout, 90);
    return [
      hook.command,
      ...hook.args.map((a: string) => a.replaceAll("${CLAUDE_PROJECT_DIR}", target)),
    ];
  };
  assertEquals(argvOf("SessionStart").slice(0, prefix.length), prefix);
  const payload = JSON.stringify({ session_id: "real-claude-session", source: "startup" });
  const hookStart = await run(argvOf("SessionStart"), "/", payload);
  assertEquals(hookStart.code, 0, hookStart.stderr);
  assertMatch(hookStart.stdout, /^BIMRI RUN HANDLE: R000002$/m);
  assertMatch(hookStart.stdout, /^=== BIMRI BRIEF R000002 \| [0-9-]+ \| claude-code ===$/m);
  const hookClose = await run(
    argvOf("SessionEnd"),
    "/",
    JSON.stringify({ session_id: "real-claude-session", reason: "logout" }),
  );
  assertMatch(hookClose.stdout, /^BIMRI: run R000002 closed\.$/m);
  const doctor = await cli(["doctor"]);
  assertEquals(doctor.code, 0, doctor.stdout);
  const state = JSON.parse(Deno.readTextFileSync(`${target}/.bimri/state.json`));
  assertEquals(Object.keys(state.active_runs), []);
  assertEquals(state.run_count, 2);
});
