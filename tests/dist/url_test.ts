/**
 * Running bimri from a URL, for real: the checkout is served over a loopback
 * HTTP server inside the test and the CLI runs as `deno run <permissions>
 * http://127.0.0.1:PORT/main.ts ...` from an unrelated folder with a fresh
 * DENO_DIR; then the server stops and the same URL must still run from the
 * cache. A remote run sees no deno.json, so the module graph may not use an
 * import map: a static check below holds every import to a full specifier.
 */
import { join, normalize, sep } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { RUN_PERMISSIONS, tempStore } from "../helpers/cli.ts";
import { RUN_V8_FLAGS } from "../../engine/install/v8_flags.ts";
import { currentRuntimePrefix, LAZY_IMPORTS_FLAG } from "../../engine/install/runtime.ts";
import { registeredVerbs, REPO_ROOT, runProcess, smokeSession } from "./dist_helpers.ts";

const CONTENT_TYPES: Record<string, string> = {
  ".ts": "application/typescript; charset=utf-8",
  ".js": "application/javascript; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
};

/** Serves the checkout's files read-only on 127.0.0.1 at a random port and records each path asked for. */
function serveCheckout(): { server: Deno.HttpServer<Deno.NetAddr>; base: string; asked: string[] } {
  const asked: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const path = decodeURIComponent(new URL(request.url).pathname);
      asked.push(path);
      const file = normalize(join(REPO_ROOT, path));
      if (!file.startsWith(normalize(REPO_ROOT)) || file.split(sep).includes(".git")) {
        return new Response("forbidden", { status: 403 });
      }
      try {
        const body = await Deno.readFile(file);
        const dot = path.lastIndexOf(".");
        const type = CONTENT_TYPES[dot < 0 ? "" : path.slice(dot)] ?? "application/octet-stream";
        return new Response(body, { headers: { "content-type": type } });
      } catch {
        return new Response("not found", { status: 404 });
      }
    },
  );
  return { server, base: `http://127.0.0.1:${server.addr.port}`, asked };
}

Deno.test("bimri runs from an http:// URL in another folder, then offline from the cache", async () => {
  const denoDir = await tempStore("bimri-url-denodir-");
  const project = await tempStore("bimri-url-project-");
  const verbs = await registeredVerbs(RUN_PERMISSIONS);
  const { server, base, asked } = serveCheckout();
  const deno = Deno.execPath();
  const env = { DENO_DIR: denoDir };
  const url = `${base}/main.ts`;
  let binding: { argv_prefix: string[] } = { argv_prefix: [] };
  try {
    const version = await runProcess(
      deno,
      ["run", "--quiet", ...RUN_PERMISSIONS, url, "--version"],
      { cwd: project, env },
    );
    assertEquals(version.code, 0, version.stderr);
    assertMatch(version.stdout, /^bimri \S+ \(compatible engine 5\.1\.2, memory format 5\.1\.0/);
    assert(asked.includes("/main.ts"), "main.ts was not fetched over HTTP");
    assert(!asked.includes("/deno.json"), "a remote run must not need deno.json");

    // The installer, run through the URL, binds the project to that same URL.
    const install = await runProcess(
      deno,
      ["run", "--quiet", ...RUN_PERMISSIONS, url, "install", "--target", "."],
      { cwd: project, env },
    );
    assertEquals(install.code, 0, `${install.stdout}${install.stderr}`);
    assert(Deno.statSync(join(project, ".bimri", "state.json")).isFile);
    assert(Deno.statSync(join(project, "AGENTS.md")).isFile);
    binding = JSON.parse(Deno.readTextFileSync(join(project, ".bimri", "runtime.local.json")));
    assertEquals(
      binding.argv_prefix.at(-1),
      url,
      "the binding must run the URL it was installed from",
    );
    assert(
      binding.argv_prefix.includes("--no-config"),
      "a remote run must not use a local deno.json",
    );
    assert(
      binding.argv_prefix.includes(LAZY_IMPORTS_FLAG),
      "a remote binding must load a verb's modules only when the verb runs",
    );
    for (const flag of [...RUN_V8_FLAGS, ...RUN_PERMISSIONS]) {
      assert(binding.argv_prefix.includes(flag), flag);
    }

    await smokeSession([deno, "run", "--quiet", ...RUN_PERMISSIONS, url], project, verbs, env);
  } finally {
    await server.shutdown();
  }

  // The server is gone: the cached module graph must be enough, with and without --cached-only,
  // and through the argv prefix the installer recorded (what agents and hooks will run).
  const offline: string[][] = [
    [deno, "run", "--quiet", "--cached-only", ...RUN_PERMISSIONS, url],
    [deno, "run", "--quiet", ...RUN_PERMISSIONS, url],
    binding.argv_prefix,
  ];
  for (const [command, ...lead] of offline) {
    const again = await runProcess(
      command,
      [...lead, "--root", project, "start", "--actor", "claude"],
      { cwd: project, env },
    );
    assertEquals(again.code, 0, `${lead.join(" ")}: ${again.stdout}${again.stderr}`);
    assertMatch(again.stdout, /^=== BIMRI BRIEF R[0-9]{6} \| .* \| claude ===$/m);
  }
  const status = await runProcess(binding.argv_prefix[0], [
    ...binding.argv_prefix.slice(1),
    "--root",
    project,
    "status",
  ], { cwd: project, env });
  assertEquals(status.code, 0, status.stderr);
  assertMatch(status.stdout, /active [1-9]/);
  await Deno.remove(project, { recursive: true });
  await Deno.remove(denoDir, { recursive: true });
});

Deno.test("the URL binding fetches and loads only the modules a verb runs", async () => {
  const { server, base, asked } = serveCheckout();
  const url = `${base}/main.ts`;
  const deno = Deno.execPath();
  // Two fresh caches, so each run fetches exactly the modules its graph needs.
  const lazyDir = await tempStore("bimri-url-lazy-");
  const eagerDir = await tempStore("bimri-url-eager-");
  try {
    const binding = currentRuntimePrefix(deno, url).argv;
    const lazy = await runProcess(binding[0], [...binding.slice(1), "--version"], {
      env: { DENO_DIR: lazyDir },
    });
    assertEquals(lazy.code, 0, lazy.stderr);
    const lazyAsked = new Set(asked);
    assert(lazyAsked.has("/main.ts"), "main.ts was not fetched");
    for (const verbOnly of ["/commands/mod.ts", "/engine/store/store.ts", "/commands/ui.ts"]) {
      assert(!lazyAsked.has(verbOnly), `--version through the binding fetched ${verbOnly}`);
    }
    // The same URL without the flag builds every verb's graph first (what the flag avoids).
    asked.length = 0;
    const eager = await runProcess(
      deno,
      ["run", "--quiet", "--no-config", ...RUN_PERMISSIONS, url, "--version"],
      { env: { DENO_DIR: eagerDir } },
    );
    assertEquals(eager.code, 0, eager.stderr);
    assert(asked.includes("/commands/ui.ts"), "an eager run should fetch every verb's modules");
  } finally {
    await server.shutdown();
    await Deno.remove(lazyDir, { recursive: true });
    await Deno.remove(eagerDir, { recursive: true });
  }
});

type InfoModule = { specifier: string; dependencies?: { specifier: string }[] };

Deno.test("the module graph of main.ts uses no import-map names (a remote run has no deno.json)", async () => {
  const info = await runProcess(
    Deno.execPath(),
    ["info", "--json", join(REPO_ROOT, "main.ts")],
    { cwd: REPO_ROOT },
  );
  assertEquals(info.code, 0, info.stderr);
  const graph = JSON.parse(info.stdout) as { modules: InfoModule[] };
  const local = graph.modules.filter((m) => m.specifier.startsWith("file:"));
  assert(local.length > 10, "deno info listed too few modules");
  const bad: string[] = [];
  for (const module of local) {
    for (const dependency of module.dependencies ?? []) {
      const s = dependency.specifier;
      const allowed = s.startsWith("./") || s.startsWith("../") || s.startsWith("node:") ||
        /^npm:(@[^/]+\/)?[^@/]+@[^/]+/.test(s);
      if (!allowed) bad.push(`${module.specifier} imports ${s}`);
    }
  }
  assertEquals(bad, [], "imports must be relative, node: or npm:pkg@version (no import map)");
});
