/**
 * Benchmark: grows real stores to 100, 1,000 and 10,000 runs (in-process,
 * through the same CLI code path), then measures each everyday command as a
 * separate `deno run` process: p50/p95 wall time, peak RSS and the p50 count
 * of minor page faults (pages the process touched for the first time, which
 * some virtual machines charge several times what physical hardware does; the
 * bench prints this machine's cost per page beside the tables). Then it times
 * the same operations as tool calls on one resident `bimri mcp` server
 * (bench/mcp_calls.ts), which shows what the engine itself costs once
 * process start and module loading are paid.
 *
 *   deno task bench [--sizes 100,1000,10000] [--samples 15] [--keep] [--snapshots DIR]
 *
 * With --snapshots, each grown size is saved as DIR/<size> (plus its live
 * subject list) and reused by later invocations, so growth to 10,000 runs is
 * paid once; measurements always run on a fresh copy.
 *
 * Prints a table per size and one JSON line with every figure. Every CLI
 * figure is also given as a multiple of an empty script's `deno run` measured
 * the same way in the same invocation (p50 over its p50, p95 over its p95),
 * so figures compare across hosts, followed by a line that states the targets
 * (at 10,000 runs: status and review p50 at most 10x the floor's p50, the
 * everyday commands at most 3.5x) and whether this size meets them.
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runCli } from "../main.ts";
import { measureMcp } from "./mcp_calls.ts";
import { RUN_PERMISSIONS } from "../engine/install/permissions.ts";
import { RUN_V8_FLAGS } from "../engine/install/v8_flags.ts";

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));
// Every process runs as an installed `deno run` binding does: same permissions, same V8 flags.
const RUN_FLAGS = [...RUN_V8_FLAGS, ...RUN_PERMISSIONS];

type Sample = { ms: number; rssKb: number | null; faults: number | null; code: number };
type Figures = {
  p50: number;
  p95: number;
  maxRssMb: number | null;
  /** p50 of the minor page faults per process (null when /usr/bin/time is absent). */
  faults: number | null;
  failures: number;
};

async function cli(root: string, args: string[]): Promise<string> {
  let out = "";
  const code = await runCli(["--root", root, ...args], {
    stdout: (t) => (out += t),
    stderr: () => {},
  });
  if (code !== 0 && code !== 1) throw new Error(`growth step failed (${code}): ${args.join(" ")}`);
  return out;
}

function lorem(i: number): string {
  return `Subject ${i}: keep the retry path idempotent, record the incident owner and verify the nightly backup ${
    "x".repeat(i % 40)
  }.`;
}

/** One CLI invocation on the store at `root`, returning its stdout. */
export type Step = (root: string, args: string[]) => Promise<string>;

/**
 * Grows `root` from `from` to `to` runs with new subjects, updates, touches,
 * closes and cooling, each command run through `step` (in-process by default).
 */
export async function grow(
  root: string,
  from: number,
  to: number,
  live: number[],
  step: Step = cli,
): Promise<void> {
  const cli = step;
  for (let i = from + 1; i <= to; i++) {
    const brief = await cli(root, ["start", "--actor", `agent-${i % 7}`]);
    const run = /BIMRI RUN HANDLE: (R\d{6})/.exec(brief)![1];
    await cli(root, ["journal", "--run", run, "--text", `Run ${i} worked on the checkout flow.`]);
    const phase = i % 4;
    if (phase === 0 || live.length < 8 || (phase === 3 && live.length < 600)) {
      await cli(root, [
        "propose",
        "--run",
        run,
        "--tier",
        "2",
        "--new-subject",
        "--key",
        `bench.subject-${i}`,
        "--importance",
        String(1 + (i % 5)),
        "--tags",
        `bench,t${i % 9}`,
        "--text",
        lorem(i),
      ]);
      live.push(i);
    } else if (phase === 1) {
      const k = live[(i * 7919) % live.length];
      await cli(root, [
        "propose",
        "--run",
        run,
        "--key",
        `bench.subject-${k}`,
        "--text",
        `${lorem(k)} Updated in run ${i}.`,
      ]);
    } else if (phase === 2) {
      const k = live[(i * 104729) % live.length];
      await cli(root, [
        "propose",
        "--run",
        run,
        "--operation",
        "touch",
        "--key",
        `bench.subject-${k}`,
      ]);
    } else {
      const k = live.shift()!;
      await cli(root, [
        "propose",
        "--run",
        run,
        "--operation",
        "close",
        "--key",
        `bench.subject-${k}`,
      ]);
    }
    await cli(root, ["close", "--run", run, "--outcome", "success", "--summary", `Run ${i} done.`]);
    if (i % 500 === 0) console.error(`  grown to ${i} runs`);
  }
}

const TIME = (() => {
  try {
    return Deno.statSync("/usr/bin/time").isFile ? "/usr/bin/time" : null;
  } catch {
    return null;
  }
})();

async function measure(root: string, args: string[], main = MAIN): Promise<Sample> {
  const base = [Deno.execPath(), "run", "--quiet", ...RUN_FLAGS, main, "--root", root, ...args];
  const cmd = TIME ? [TIME, "-f", "BIMRI_RSS_KB=%M BIMRI_FAULTS=%R", ...base] : base;
  const started = performance.now();
  const out = await new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const ms = performance.now() - started;
  const stderr = new TextDecoder().decode(out.stderr);
  const rss = /BIMRI_RSS_KB=(\d+)/.exec(stderr);
  const faults = /BIMRI_FAULTS=(\d+)/.exec(stderr);
  return {
    ms,
    rssKb: rss ? Number(rss[1]) : null,
    faults: faults ? Number(faults[1]) : null,
    code: out.code,
  };
}

/**
 * What this machine charges for a page touched for the first time, in
 * microseconds: a 64 MB buffer written one byte per 4 KB page. A short
 * process's cost follows its page faults as much as its instructions.
 */
function firstTouchMicros(): number {
  const size = 64 << 20;
  const started = performance.now();
  const bytes = new Uint8Array(size);
  for (let at = 0; at < size; at += 4096) bytes[at] = 1;
  return Math.round(((performance.now() - started) * 1000 / (size / 4096)) * 10) / 10;
}

/** The `q` quantile of `values` (nearest rank below), or null when there are none. */
function quantile(values: number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function figures(samples: Sample[]): Figures {
  const times = samples.map((s) => s.ms);
  const rss = samples.map((s) => s.rssKb).filter((v): v is number => v !== null);
  const faults = samples.map((s) => s.faults).filter((v): v is number => v !== null);
  return {
    p50: Math.round(quantile(times, 0.5) ?? 0),
    p95: Math.round(quantile(times, 0.95) ?? 0),
    maxRssMb: rss.length ? Math.round(Math.max(...rss) / 1024) : null,
    faults: quantile(faults, 0.5),
    failures: samples.filter((s) => s.code !== 0 && s.code !== 1).length,
  };
}

/** Measures every command `samples` times against the store at `root`. */
/**
 * Flushes the file system before measuring. A freshly copied or grown store
 * leaves hundreds of MB of dirty pages whose write-back would otherwise run
 * during the measurements (slowing every fsync and doctor's reads), which a
 * store at rest in a project never sees.
 */
async function settle(): Promise<void> {
  if (Deno.build.os === "windows") return;
  const out = await new Deno.Command("sync").output();
  if (!out.success) throw new Error("sync failed");
}

async function measureAll(
  root: string,
  samples: number,
  live: number[],
): Promise<Record<string, Figures>> {
  const collected: Record<string, Sample[]> = {};
  const add = (name: string, s: Sample) => (collected[name] ??= []).push(s);
  const state = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/state.json`));
  const coldKeys = Object.keys(state.cold_current ?? {});
  const hotKey = `bench.subject-${live[live.length - 1]}`;
  for (let i = 0; i < samples; i++) {
    const started = await measure(root, ["start", "--actor", "bench"]);
    add("start", started);
    const run = `R${
      String(JSON.parse(Deno.readTextFileSync(`${root}/.bimri/state.json`)).run_count).padStart(
        6,
        "0",
      )
    }`;
    add(
      "journal",
      await measure(root, ["journal", "--run", run, "--text", "Measured journal entry."]),
    );
    add(
      "propose",
      await measure(root, [
        "propose",
        "--run",
        run,
        "--tier",
        "2",
        "--new-subject",
        "--key",
        `measure.s${run.toLowerCase()}`,
        "--text",
        "Measured subject.",
      ]),
    );
    add("sync", await measure(root, ["sync", "--run", run]));
    await cli(root, [
      "propose",
      "--run",
      run,
      "--operation",
      "close",
      "--key",
      `measure.s${run.toLowerCase()}`,
    ]);
    add(
      "close",
      await measure(root, [
        "close",
        "--run",
        run,
        "--outcome",
        "success",
        "--summary",
        "Measured.",
      ]),
    );
    add("get --key (hot)", await measure(root, ["get", "--key", hotKey]));
    if (coldKeys.length) {
      add("get --key (cold)", await measure(root, ["get", "--key", coldKeys[i % coldKeys.length]]));
    }
    add("recall --query", await measure(root, ["recall", "--query", "retry idempotent backup"]));
    add(
      "recall --query --rank",
      await measure(root, ["recall", "--query", "retry idempotent backup", "--rank"]),
    );
    add("status", await measure(root, ["status"]));
    add("review", await measure(root, ["review"]));
    add("index", await measure(root, ["index"]));
    if (i < 3) {
      add("doctor", await measure(root, ["doctor"]));
      add("doctor --read-only", await measure(root, ["doctor", "--read-only"]));
    }
  }
  const out: Record<string, Figures> = {};
  for (const [name, list] of Object.entries(collected)) out[name] = figures(list);
  return out;
}

/** The MCP phase: each row's call times, and the server's peak RSS on every row. */
async function measureMcpAll(
  root: string,
  samples: number,
  live: number[],
): Promise<Record<string, Figures>> {
  const state = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/state.json`));
  const server = [Deno.execPath(), "run", "--quiet", ...RUN_FLAGS, MAIN];
  const timings = await measureMcp(
    TIME ? [TIME, "-f", "BIMRI_RSS_KB=%M", ...server] : server,
    root,
    samples,
    {
      hot: `bench.subject-${live[live.length - 1]}`,
      cold: Object.keys(state.cold_current ?? {}),
      query: "retry idempotent backup",
    },
  );
  const rss = /BIMRI_RSS_KB=(\d+)/.exec(timings.stderr);
  const rssKb = rss ? Number(rss[1]) : null;
  const out: Record<string, Figures> = {};
  for (const [name, times] of Object.entries(timings.calls)) {
    out[name] = figures(times.map((ms) => ({ ms, rssKb, faults: null, code: 0 })));
  }
  return out;
}

/** A time as a multiple of the floor's (one decimal), or "n/a" without a floor. */
function times(ms: number, floorMs: number): string {
  return floorMs > 0 ? `${(ms / floorMs).toFixed(1)}x` : "n/a";
}

function table(
  size: number,
  results: Record<string, Figures>,
  title = "runs",
  floor: Figures | null = null,
): string {
  // CLI tables also give p50 and p95 as multiples of the empty `deno run`'s
  // p50 and p95 in this same run, so figures compare across hosts.
  const rows = Object.entries(results).map(([name, f]) =>
    `| ${name.padEnd(24)} | ${String(f.p50).padStart(7)} | ${String(f.p95).padStart(7)} | ${
      floor
        ? `${times(f.p50, floor.p50).padStart(11)} | ${times(f.p95, floor.p95).padStart(11)} | `
        : ""
    }${String(f.maxRssMb ?? "n/a").padStart(8)} | ${String(f.faults ?? "n/a").padStart(6)} | ${
      String(f.failures).padStart(8)
    } |`
  );
  return [
    `\n${size} ${title}`,
    `| command                  | p50 ms  | p95 ms  | ${
      floor ? "p50 x floor | p95 x floor | " : ""
    }peak MB  | faults | failures |`,
    `|--------------------------|---------|---------|${
      floor ? "-------------|-------------|" : ""
    }----------|--------|----------|`,
    ...rows,
  ].join("\n");
}

/**
 * The targets, as multiples of the empty `deno run`'s p50 (issue 33), judged
 * on each command's p50 at 10,000 runs: status and review at most 10x, the
 * everyday commands at most 3.5x.
 */
const TARGETS: { label: string; commands: string[]; max: number }[] = [
  { label: "status", commands: ["status"], max: 10 },
  { label: "review", commands: ["review"], max: 10 },
  {
    label: "everyday",
    commands: [
      "start",
      "journal",
      "propose",
      "sync",
      "close",
      "get --key (hot)",
      "get --key (cold)",
    ],
    max: 3.5,
  },
];

type TargetResult = {
  target: string;
  max: number;
  worst: string;
  p50_x_floor: number;
  met: boolean;
};

/** Each target's worst command at this size (p50 over the floor's p50), and whether it is met. */
function targetResults(results: Record<string, Figures>, floor: Figures): TargetResult[] {
  const out: TargetResult[] = [];
  for (const t of TARGETS) {
    let worst: [string, number] | null = null;
    for (const name of t.commands) {
      const f = results[name];
      if (!f || floor.p50 <= 0) continue;
      const ratio = f.p50 / floor.p50;
      if (!worst || ratio > worst[1]) worst = [name, ratio];
    }
    if (!worst) continue;
    const rounded = Math.round(worst[1] * 10) / 10;
    out.push({
      target: t.label,
      max: t.max,
      worst: worst[0],
      p50_x_floor: rounded,
      met: worst[1] <= t.max,
    });
  }
  return out;
}

function targetLine(size: number, results: TargetResult[]): string {
  const parts = results.map((r) =>
    `${r.target} <= ${r.max}x: ${r.met ? "met" : "NOT met"} (${
      r.target === "everyday" ? `worst ${r.worst} ` : ""
    }${r.p50_x_floor}x)`
  );
  return `targets at ${size} runs (p50 as a multiple of the empty deno run's p50; set for 10,000 runs): ${
    parts.join("; ")
  }`;
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      sizes: { type: "string" },
      samples: { type: "string" },
      keep: { type: "boolean" },
      snapshots: { type: "string" },
      "grow-only": { type: "boolean" },
    },
  });
  const sizes = (values.sizes ?? "100,1000,10000").split(",").map(Number).sort((a, b) => a - b);
  const samples = Number(values.samples ?? "15");
  const root = await Deno.makeTempDir({ prefix: "bimri-bench-" });
  const live: number[] = [];
  const report: Record<string, Record<string, Figures>> = {};
  const mcpReport: Record<string, Record<string, Figures>> = {};
  const targets: Record<string, TargetResult[]> = {};
  let grown = 0;
  const touchMicros = firstTouchMicros();
  console.error(
    `bench store: ${root}; ${Deno.build.os}/${Deno.build.arch}, ${navigator.hardwareConcurrency} cores, ${touchMicros} us per first-touched page`,
  );
  // The floor every CLI figure stands on: a script that does nothing, run the same way.
  const empty = `${root}.empty.ts`;
  Deno.writeTextFileSync(empty, "export {};\n");
  const bare: Sample[] = [];
  for (let i = 0; i < samples; i++) bare.push(await measure(root, [], empty));
  Deno.removeSync(empty);
  const floor = figures(bare);
  console.log(
    `bare deno run of an empty script: p50 ${floor.p50} ms, p95 ${floor.p95} ms, ${
      floor.faults ?? "n/a"
    } page faults; ${touchMicros} us per first-touched page`,
  );
  const snapshots = values.snapshots;
  const copyTree = async (from: string, to: string) => {
    await Deno.remove(to, { recursive: true }).catch(() => {});
    const out = await new Deno.Command("cp", { args: ["-a", from, to] }).output();
    if (!out.success) throw new Error(`cp -a ${from} ${to} failed`);
  };
  for (const size of sizes) {
    const t0 = performance.now();
    const saved = snapshots ? `${snapshots}/${size}` : null;
    let reused = false;
    if (saved) {
      try {
        const meta = JSON.parse(Deno.readTextFileSync(`${saved}.live.json`));
        live.splice(0, live.length, ...meta.live);
        await copyTree(saved, root + ".tmp");
        await Deno.remove(root, { recursive: true });
        await Deno.rename(root + ".tmp", root);
        reused = true;
      } catch {
        // Not saved yet: grow.
      }
    }
    if (!reused) {
      if (saved) {
        // Continue from the largest smaller snapshot.
        const smaller = sizes.filter((s) => s < size).reverse().find((s) => {
          try {
            return Deno.statSync(`${snapshots}/${s}.live.json`).isFile;
          } catch {
            return false;
          }
        });
        if (smaller !== undefined) {
          const meta = JSON.parse(Deno.readTextFileSync(`${snapshots}/${smaller}.live.json`));
          live.splice(0, live.length, ...meta.live);
          await copyTree(`${snapshots}/${smaller}`, root + ".tmp");
          await Deno.remove(root, { recursive: true });
          await Deno.rename(root + ".tmp", root);
          grown = smaller;
        }
      }
      await grow(root, grown, size, live);
      console.error(`grew to ${size} runs in ${Math.round((performance.now() - t0) / 1000)} s`);
      if (saved) {
        Deno.mkdirSync(snapshots!, { recursive: true });
        await copyTree(root, saved);
        Deno.writeTextFileSync(`${saved}.live.json`, JSON.stringify({ live }));
      }
    }
    grown = size;
    if (values["grow-only"]) continue;
    // Warm-up: a copied store has new inodes, so its derived caches no longer
    // vouch for it. `index` rebuilds them (as install does on a real project)
    // and one session re-proves the everyday summary.
    await cli(root, ["index"]);
    const warm =
      /BIMRI RUN HANDLE: (R\d{6})/.exec(await cli(root, ["start", "--actor", "bench"]))![1];
    await cli(root, ["close", "--run", warm, "--outcome", "success", "--summary", "Warm-up."]);
    await settle();
    report[size] = await measureAll(root, samples, live);
    grown += samples + 1;
    console.log(table(size, report[size], "runs", floor));
    targets[size] = targetResults(report[size], floor);
    console.log(targetLine(size, targets[size]));
    mcpReport[size] = await measureMcpAll(root, samples, live);
    grown += samples;
    console.log(table(size, mcpReport[size], "runs, per call on one resident bimri mcp server"));
  }
  console.log(
    JSON.stringify({
      bimri_bench: report,
      bimri_bench_mcp: mcpReport,
      samples,
      os: Deno.build.os,
      arch: Deno.build.arch,
      first_touch_us_per_page: touchMicros,
      bare_deno_run: floor,
      targets,
    }),
  );
  if (!values.keep) await Deno.remove(root, { recursive: true });
}
