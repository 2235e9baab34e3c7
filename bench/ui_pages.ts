/**
 * Benchmark: the owner's console on a grown store. Starts `bimri ui` as its
 * own process (as an owner would), signs in with the printed token, then
 * times each page over HTTP: right after an agent changed the store (a
 * journal line through the CLI, so the page reads the engine again), on the
 * warm server with the store unchanged (a new URL, so the page is rendered
 * again from what the server read), and cached repeats. Also reports each
 * page's size (the Memory page must stay under 1 MB). The store is written
 * to (one bench run and its journal lines): pass --snapshot to measure a copy.
 *
 *   deno run -A bench/ui_pages.ts --root DIR [--samples 15] [--key KEY]
 *   deno run -A bench/ui_pages.ts --snapshot /tmp/snaps/10000   (measures a copy)
 *
 * Grow a store first with `deno task bench --sizes 10000 --snapshots DIR --grow-only`.
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { RUN_PERMISSIONS } from "../engine/install/permissions.ts";
import { RUN_V8_FLAGS } from "../engine/install/v8_flags.ts";

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));

function p50(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

async function timed(
  url: string,
  cookie: string,
): Promise<{ ms: number; bytes: number; status: number }> {
  const t0 = performance.now();
  const response = await fetch(url, { headers: { cookie }, redirect: "manual" });
  const body = new Uint8Array(await response.arrayBuffer());
  return { ms: performance.now() - t0, bytes: body.length, status: response.status };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      root: { type: "string" },
      snapshot: { type: "string" },
      samples: { type: "string" },
      key: { type: "string" },
    },
  });
  let root = values.root;
  if (values.snapshot) {
    root = await Deno.makeTempDir({ prefix: "bimri-ui-bench-" });
    const out = await new Deno.Command("cp", { args: ["-a", `${values.snapshot}/.`, root] })
      .output();
    if (!out.success) throw new Error(`cp -a ${values.snapshot} failed`);
  }
  if (!root) throw new Error("pass --root DIR or --snapshot DIR");
  const samples = Number(values.samples ?? "15");
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      ...RUN_V8_FLAGS,
      ...RUN_PERMISSIONS,
      "--allow-net=127.0.0.1",
      MAIN,
      "--root",
      root,
      "ui",
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let url: string | null = null;
  while (url === null) {
    const { value, done } = await reader.read();
    if (done) throw new Error("bimri ui exited before printing its URL");
    seen += value;
    url = /^BIMRI UI: (\S+)$/m.exec(seen)?.[1] ?? null;
  }
  const origin = new URL(url).origin;
  const exchange = await fetch(url, { redirect: "manual" });
  await exchange.body?.cancel();
  const cookie = (exchange.headers.get("set-cookie") ?? "").split(";")[0];
  // A key that has history: the first live subject the Memory page lists.
  const memory = await (await fetch(`${origin}/memory`, { headers: { cookie } })).text();
  const key = values.key ?? /href="\/key\?k=([^"]+)"/.exec(memory)?.[1] ?? "bench.subject-1";
  const pages: [string, string][] = [
    ["overview", "/?"],
    ["memory", "/memory?"],
    ["key", `/key?k=${key}&`],
    ["inbox", "/inbox?"],
    ["runs", "/runs?"],
  ];
  const runs = (await (await fetch(`${origin}/`, { headers: { cookie } })).text()).match(
    /Runs<\/div>\s*<div class="figure">([0-9]+)/,
  )?.[1];
  console.log(`store ${root}: ${runs ?? "?"} runs; ${samples} samples per page`);
  const cli = async (args: string[]) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", ...RUN_V8_FLAGS, ...RUN_PERMISSIONS, MAIN, "--root", root!, ...args],
      stdout: "piped",
      stderr: "null",
    }).output();
    return new TextDecoder().decode(out.stdout);
  };
  const run = /BIMRI RUN HANDLE: (R[0-9]{6})/.exec(await cli(["start", "--actor", "bench"]))?.[1];
  if (!run) throw new Error("could not start the bench run");
  // A sync records the engine's summary (a copied store's no longer matches), as agents' writes keep it.
  await cli(["sync", "--run", run]);
  console.log("page       after-change p50 ms   warm render p50 ms   cached p50 ms   bytes");
  const figures: Record<string, unknown> = {};
  for (const [name, path] of pages) {
    const changed: number[] = [];
    let bytes = 0;
    for (let i = 0; i < samples; i++) {
      await cli(["journal", "--run", run, "--text", `bench line ${name} ${i}`]);
      const first = await timed(`${origin}${path}_=c${i}`, cookie);
      changed.push(first.ms);
      bytes = first.bytes;
    }
    const renders: number[] = [];
    const cachedRuns: number[] = [];
    for (let i = 0; i < samples; i++) {
      renders.push((await timed(`${origin}${path}_=${i}`, cookie)).ms);
    }
    for (let i = 0; i < samples; i++) {
      cachedRuns.push((await timed(`${origin}${path}_=0`, cookie)).ms);
    }
    const row = {
      changed_p50: p50(changed),
      render_p50: p50(renders),
      cached_p50: p50(cachedRuns),
      bytes,
    };
    figures[name] = row;
    console.log(
      `${name.padEnd(10)} ${row.changed_p50.toFixed(1).padStart(19)}   ${
        row.render_p50.toFixed(1).padStart(18)
      }   ${row.cached_p50.toFixed(1).padStart(13)}   ${row.bytes}`,
    );
  }
  console.log(JSON.stringify({ runs: Number(runs), samples, pages: figures }));
  child.kill("SIGTERM");
  await child.status;
  if (values.snapshot) await Deno.remove(root, { recursive: true });
}
