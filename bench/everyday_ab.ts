/**
 * Benchmark (not a timed test): the everyday commands of two or more bimri
 * checkouts measured interleaved on copies of one store, so drift in a shared
 * machine's load falls on every engine alike.
 *
 *   deno run -A bench/everyday_ab.ts --engines base=/path/to/worktree,branch=.
 *     [--runs 40] [--store DIR] [--samples 15] [--same-flags] [--keep]
 *
 * Each engine is a folder holding bimri's main.ts and deno.json; it runs as an
 * installed `deno run` binding of that checkout does: its own deno.json, and
 * the V8 flags and permissions its own `engine/install/` gives the binding, so
 * an older checkout is measured as it shipped (`--same-flags` runs every engine
 * with this checkout's instead). The store has `--runs` runs grown through this checkout's
 * CLI (or is a copy of `--store`, e.g. a snapshot of bench/grow_and_measure.ts
 * with its `.live.json`); every engine gets its own copy, re-derives its caches
 * (`index` and one session, as install does) and then, each round, runs one
 * agent session: start, journal, propose, sync, close, get --key. Each command
 * runs on every engine back to back, in an order that rotates every round.
 * Then each engine's `--version` and `get --key` on a fresh one-entry store,
 * interleaved the same way, beside the empty `deno run` (the floor).
 *
 * Prints p50 / p95 wall time per command and engine, the p50 as a multiple of
 * the floor's, the median of the per-round ratios to the first engine, and
 * (where python3 reports getrusage) the p50 CPU time, then one JSON line.
 */
import { fileURLToPath, pathToFileURL } from "node:url";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { grow } from "./grow_and_measure.ts";
import { timeProcess } from "./timing.ts";
import { RUN_PERMISSIONS } from "../engine/install/permissions.ts";
import { RUN_V8_FLAGS } from "../engine/install/v8_flags.ts";

const HERE = fileURLToPath(new URL("..", import.meta.url));

/** A checkout to measure, and the flags its own installer gives a `deno run` binding. */
type Engine = {
  label: string;
  dir: string;
  v8Flags: readonly string[];
  permissions: readonly string[];
};

/** The V8 flags and permissions the checkout at `dir` binds bimri with (its engine/install/). */
async function shippedFlags(
  dir: string,
): Promise<{ v8Flags: readonly string[]; permissions: readonly string[] }> {
  const own = (name: string) => pathToFileURL(join(dir, "engine", "install", name)).href;
  const { RUN_V8_FLAGS: v8Flags } = await import(own("v8_flags.ts"));
  const { RUN_PERMISSIONS: permissions } = await import(own("permissions.ts"));
  const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === "string");
  if (!strings(v8Flags) || !strings(permissions)) {
    throw new Error(`${dir}: engine/install/ does not export RUN_V8_FLAGS and RUN_PERMISSIONS`);
  }
  return { v8Flags, permissions };
}
type Timed = { ms: number; cpuMs: number | null; out: string; code: number };

/** Runs `script` (with `args`) as an installed binding of `engine` runs bimri. */
async function timed(engine: Engine, script: string, args: string[]): Promise<Timed> {
  const config = join(engine.dir, "deno.json");
  const deno = [
    Deno.execPath(),
    "run",
    "--quiet",
    ...engine.v8Flags,
    "--config",
    config,
    ...engine.permissions,
    script,
    ...args,
  ];
  const { ms, cpuMs, out, code } = await timeProcess(deno);
  return { ms, cpuMs, out, code };
}

/** One bimri command of `engine` on the store at `root`; a failure stops the bench. */
async function bimri(engine: Engine, root: string, args: string[]): Promise<Timed> {
  const done = await timed(engine, join(engine.dir, "main.ts"), ["--root", root, ...args]);
  if (done.code !== 0) {
    throw new Error(`${engine.label}: bimri ${args.join(" ")} exited ${done.code}`);
  }
  return done;
}

function handle(brief: string): string {
  const found = /BIMRI RUN HANDLE: (R\d{6})/.exec(brief);
  if (!found) throw new Error("start printed no run handle");
  return found[1];
}

async function copyTree(from: string, to: string): Promise<void> {
  const out = await new Deno.Command("cp", { args: ["-a", from, to] }).output();
  if (!out.success) throw new Error(`cp -a ${from} ${to} failed`);
}

/** The `q` quantile (nearest rank) of `values`. */
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1))];
}

/** Wall and CPU samples per row and engine, and per-round ratios to the first engine. */
type Collected = {
  wall: Record<string, Record<string, number[]>>;
  cpu: Record<string, Record<string, number[]>>;
  paired: Record<string, Record<string, number[]>>;
};

function collector(): Collected & { add: (row: string, label: string, t: Timed) => void } {
  const c: Collected = { wall: {}, cpu: {}, paired: {} };
  return {
    ...c,
    add(row, label, t) {
      ((c.wall[row] ??= {})[label] ??= []).push(t.ms);
      if (t.cpuMs !== null) ((c.cpu[row] ??= {})[label] ??= []).push(t.cpuMs);
    },
  };
}

/** Engines in the order they run in round `i`: rotated by one each round. */
function rotation(engines: Engine[], i: number): Engine[] {
  const k = i % engines.length;
  return [...engines.slice(k), ...engines.slice(0, k)];
}

/** Records each engine's ratio to the first engine for the samples just taken. */
function pair(c: Collected, row: string, engines: Engine[]): void {
  const first = c.wall[row][engines[0].label];
  const base = first[first.length - 1];
  for (const e of engines.slice(1)) {
    const mine = c.wall[row][e.label];
    ((c.paired[row] ??= {})[e.label] ??= []).push(mine[mine.length - 1] / base);
  }
}

const SESSION = ["start", "journal", "propose", "sync", "close", "get --key"] as const;

/** One agent session per round on each engine's store, command by command across engines. */
async function sessions(
  engines: Engine[],
  roots: Record<string, string>,
  hotKey: string,
  samples: number,
  c: ReturnType<typeof collector>,
): Promise<void> {
  for (let i = 0; i < samples; i++) {
    const runs: Record<string, string> = {};
    const key = `measure.ab-${i}`;
    for (const row of SESSION) {
      for (const e of rotation(engines, i)) {
        const root = roots[e.label];
        const r = runs[e.label];
        let args: string[];
        if (row === "start") args = ["start", "--actor", "bench"];
        else if (row === "journal") args = ["journal", "--run", r, "--text", `Entry ${i}.`];
        else if (row === "propose") {
          args = ["propose", "--run", r, "--tier", "2", "--new-subject", "--key", key];
          args.push("--text", `Measured subject ${i}.`);
        } else if (row === "sync") args = ["sync", "--run", r];
        else if (row === "close") {
          // Unmeasured: retire the subject so the hot view keeps its size.
          await bimri(e, root, ["propose", "--run", r, "--operation", "close", "--key", key]);
          args = ["close", "--run", r, "--outcome", "success", "--summary", "Measured."];
        } else args = ["get", "--key", hotKey];
        const t = await bimri(e, root, args);
        if (row === "start") runs[e.label] = handle(t.out);
        c.add(row, e.label, t);
      }
      pair(c, row, engines);
    }
  }
}

/** The floor, `--version` and `get --key` on a one-entry store, interleaved. */
async function small(
  engines: Engine[],
  work: string,
  samples: number,
  c: ReturnType<typeof collector>,
): Promise<void> {
  const roots: Record<string, string> = {};
  for (const e of engines) {
    const root = join(work, `small-${e.label}`);
    Deno.mkdirSync(root);
    const r = handle((await bimri(e, root, ["start", "--actor", "bench"])).out);
    await bimri(e, root, [
      "propose",
      "--run",
      r,
      "--tier",
      "2",
      "--new-subject",
      "--key",
      "bench.one",
      "--text",
      "One entry.",
    ]);
    await bimri(e, root, ["close", "--run", r, "--outcome", "success", "--summary", "One."]);
    roots[e.label] = root;
  }
  const empty = join(work, "empty.ts");
  Deno.writeTextFileSync(empty, "export {};\n");
  for (let i = 0; i < samples; i++) {
    c.add("empty deno run", "floor", await timed(engines[0], empty, []));
    for (const e of rotation(engines, i)) {
      c.add("--version", e.label, await timed(e, join(e.dir, "main.ts"), ["--version"]));
    }
    pair(c, "--version", engines);
    for (const e of rotation(engines, i)) {
      c.add(
        "get --key (1 entry)",
        e.label,
        await bimri(e, roots[e.label], ["get", "--key", "bench.one"]),
      );
    }
    pair(c, "get --key (1 entry)", engines);
  }
}

/** One row of a Markdown table. */
function tableRow(cells: string[]): string {
  return `| ${cells.join(" | ")} |`;
}

function report(engines: Engine[], c: Collected): string {
  const floor = c.wall["empty deno run"]?.floor ?? [];
  const floorP50 = floor.length ? quantile(floor, 0.5) : 0;
  const lines = [
    `empty deno run: p50 ${floorP50.toFixed(0)} ms, p95 ${
      floor.length ? quantile(floor, 0.95).toFixed(0) : "n/a"
    } ms`,
    "",
    // One column per engine for wall and CPU, and one paired ratio per engine after the first.
    tableRow([
      "command",
      ...engines.map((e) => `${e.label} p50 / p95 ms (x floor)`),
      ...engines.slice(1).map((e) => `${e.label}/${engines[0].label} paired p50`),
      ...engines.map((e) => `${e.label} cpu p50`),
    ]),
    tableRow(["---", ...Array(engines.length * 3 - 1).fill("---:")]),
  ];
  for (const row of Object.keys(c.wall)) {
    if (row === "empty deno run") continue;
    const cells = engines.map((e) => {
      const w = c.wall[row][e.label];
      const p50 = quantile(w, 0.5);
      const x = floorP50 ? ` (${(p50 / floorP50).toFixed(1)}x)` : "";
      return `${p50.toFixed(0)} / ${quantile(w, 0.95).toFixed(0)}${x}`;
    });
    const paired = engines.slice(1).map((e) => quantile(c.paired[row][e.label], 0.5).toFixed(2));
    const cpu = engines.map((e) => {
      const v = c.cpu[row]?.[e.label];
      return v?.length ? quantile(v, 0.5).toFixed(0) : "n/a";
    });
    lines.push(tableRow([row, ...cells, ...paired, ...cpu]));
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      engines: { type: "string" },
      runs: { type: "string" },
      store: { type: "string" },
      samples: { type: "string" },
      "same-flags": { type: "boolean" },
      keep: { type: "boolean" },
    },
  });
  const engines: Engine[] = [];
  for (const spec of (values.engines ?? `branch=${HERE}`).split(",")) {
    const at = spec.indexOf("=");
    const label = at < 0 ? spec : spec.slice(0, at);
    const dir = resolve(at < 0 ? spec : spec.slice(at + 1));
    const flags = values["same-flags"]
      ? { v8Flags: RUN_V8_FLAGS, permissions: RUN_PERMISSIONS }
      : await shippedFlags(dir);
    engines.push({ label, dir, ...flags });
  }
  const samples = Number(values.samples ?? "15");
  const work = await Deno.makeTempDir({ prefix: "bimri-ab-" });
  console.error(`bench folder: ${work}; engines:`);
  for (const e of engines) console.error(`  ${e.label}=${e.dir} ${e.v8Flags.join(" ")}`);
  const template = join(work, "template");
  let live: number[] = [];
  let size = Number(values.runs ?? "40");
  if (values.store) {
    await copyTree(values.store, template);
    live = JSON.parse(Deno.readTextFileSync(`${values.store}.live.json`)).live;
    size = JSON.parse(Deno.readTextFileSync(join(template, ".bimri", "state.json"))).run_count;
  } else {
    Deno.mkdirSync(template);
    await grow(template, 0, size, live);
  }
  const roots: Record<string, string> = {};
  for (const e of engines) {
    roots[e.label] = join(work, `store-${e.label}`);
    await copyTree(template, roots[e.label]);
    // A copy has new inodes: each engine re-derives its caches, as install does.
    await bimri(e, roots[e.label], ["index"]);
    const r = handle((await bimri(e, roots[e.label], ["start", "--actor", "bench"])).out);
    await bimri(e, roots[e.label], ["close", "--run", r, "--outcome", "success"]);
  }
  await Deno.remove(template, { recursive: true });
  await new Deno.Command("sync").output();
  const c = collector();
  await sessions(engines, roots, `bench.subject-${live[live.length - 1]}`, samples, c);
  await small(engines, work, samples, c);
  console.log(`\n${size} runs, ${samples} interleaved rounds (wall ms, process start included)`);
  console.log(report(engines, c));
  console.log(
    JSON.stringify({ bimri_ab: { runs: size, samples, engines, wall: c.wall, cpu: c.cpu } }),
  );
  if (!values.keep) await Deno.remove(work, { recursive: true });
}
