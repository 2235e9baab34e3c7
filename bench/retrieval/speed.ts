/**
 * Times `recall --query` (default mode) against `recall --query --rank` as
 * separate `deno run` processes on an existing store (for example a 10,000-run
 * snapshot of `deno task bench --snapshots DIR`, copied first: the bench
 * runs `index` on it so the history digest vouches for the copy), beside an
 * empty script's `deno run` as the floor.
 *
 *   deno run -A bench/retrieval/speed.ts --store DIR [--samples 15] [--query "..."]...
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { RUN_PERMISSIONS } from "../../engine/install/permissions.ts";
import { RUN_V8_FLAGS } from "../../engine/install/v8_flags.ts";

const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));
const RUN_FLAGS = [...RUN_V8_FLAGS, ...RUN_PERMISSIONS];

async function timed(args: string[]): Promise<{ ms: number; code: number }> {
  const started = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...RUN_FLAGS, ...args],
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - started;
  if (out.code > 1) throw new Error(new TextDecoder().decode(out.stderr));
  return { ms, code: out.code };
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      store: { type: "string" },
      samples: { type: "string", default: "15" },
      query: { type: "string", multiple: true },
    },
  });
  if (!values.store) throw new Error("give --store DIR");
  const samples = Number(values.samples);
  const queries = values.query ?? [
    "retry idempotent backup",
    "how do retries work",
    "which subject mentions the nightly backup owner",
  ];
  const empty = await Deno.makeTempFile({ suffix: ".ts" });
  const rows: [string, number[]][] = [["empty deno run", []]];
  for (const query of queries) {
    rows.push([`recall --query "${query}"`, []], [`recall --query "${query}" --rank`, []]);
  }
  // Interleaved, so a burst of load on the shared host hits every row alike.
  for (let i = 0; i < samples; i++) {
    rows[0][1].push((await timed([empty])).ms);
    for (let q = 0; q < queries.length; q++) {
      const base = [MAIN, "--root", values.store, "recall", "--query", queries[q]];
      rows[1 + 2 * q][1].push((await timed(base)).ms);
      rows[2 + 2 * q][1].push((await timed([...base, "--rank"])).ms);
    }
  }
  await Deno.remove(empty);
  console.log(`samples ${samples}; p50 / p95 ms`);
  for (const [name, times] of rows) {
    console.log(`${name.padEnd(72)} ${quantile(times, 0.5)} / ${quantile(times, 0.95)}`);
  }
}

if (import.meta.main) await main();
