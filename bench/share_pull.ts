/**
 * Benchmark of team memory (not a timed test):
 *
 * 1. `share pull` of 10,000 records from 5 replicas into a fresh clone, as a
 *    separate `deno run` process. Each replica writes 2,000 records: chains
 *    of edits over 100 keys of its own (each record replaces the replica's
 *    previous record of that key), and every 10th record also edits one key
 *    of the pool all replicas share, having seen the other replicas' records
 *    up to then (a causal successor). Only the newest effect of each chain is
 *    committed; superseded records cost a read and a hash check.
 * 2. The same pull with 1,000 records that each set a distinct key (every
 *    record a commit: the worst case per record).
 * 3. Everyday commands (start, get, journal, propose + sync) on a shared and
 *    an unshared store of the same content, p50 over --samples runs each.
 *
 *   deno run -A bench/share_pull.ts [--samples 9] [--keep]
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { recordText, type ShareRecord } from "../engine/share/record.ts";
import { mintReplicaId, recordName } from "../engine/share/ids.ts";
import { RUN_PERMISSIONS } from "../engine/install/permissions.ts";
import { RUN_V8_FLAGS } from "../engine/install/v8_flags.ts";

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));

async function bimri(root: string, args: string[]): Promise<{ ms: number; out: string }> {
  const t0 = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...RUN_V8_FLAGS, ...RUN_PERMISSIONS, MAIN, "--root", root, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  const text = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) {
    throw new Error(`${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return { ms, out: text };
}

function entry(text: string): ShareRecord["entry"] {
  return {
    tier: 2,
    text,
    importance: 3,
    status: "active",
    trust: "working",
    source: "agent",
    tags: [],
  };
}

/** Writes `perReplica` records for each of `replicas` into `<root>/.bimri-share/`. */
function writeChains(root: string, replicas: string[], perReplica: number): void {
  const share = join(root, ".bimri-share");
  const lastOfKey = new Map<string, string>();
  for (const [r, replica] of replicas.entries()) {
    Deno.mkdirSync(join(share, replica), { recursive: true });
    for (let seq = 1; seq <= perReplica; seq++) {
      const sharedPool = seq % 10 === 0;
      const key = sharedPool ? `bench.shared.k${(seq / 10) % 20}` : `bench.r${r}.k${seq % 100}`;
      // Shared-pool edits saw every earlier replica's whole chain (they were pulled first).
      const vector: Record<string, number> = {};
      for (let q = 0; q < r; q++) vector[replicas[q]] = perReplica;
      if (seq > 1) vector[replica] = seq - 1;
      const record: ShareRecord = {
        replica,
        seq,
        kind: "change",
        key,
        operation: "set",
        entry: entry(`Replica ${r} record ${seq} on ${key}.`),
        replaces: lastOfKey.get(key) ?? null,
        resolves: [],
        run: "R000001",
        actor: "codex",
        at: "2026-12-05T09:00:00Z",
        source: `R000001-Q${String((seq % 999) + 1).padStart(3, "0")}`,
        vector,
      };
      lastOfKey.set(key, `${replica}:${seq}`);
      Deno.writeTextFileSync(join(share, replica, recordName(seq)), recordText(record));
    }
  }
}

/** Writes `count` records that each set a distinct key, spread over `replicas`. */
function writeDistinct(root: string, replicas: string[], count: number): void {
  const share = join(root, ".bimri-share");
  const per = count / replicas.length;
  for (const [r, replica] of replicas.entries()) {
    Deno.mkdirSync(join(share, replica), { recursive: true });
    for (let seq = 1; seq <= per; seq++) {
      const record: ShareRecord = {
        replica,
        seq,
        kind: "change",
        key: `bench.d${r}.k${seq}`,
        operation: "set",
        entry: entry(`Distinct ${r}.${seq}.`),
        replaces: null,
        resolves: [],
        run: "R000001",
        actor: "codex",
        at: "2026-12-05T09:00:00Z",
        source: "R000001-Q001",
        vector: seq > 1 ? { [replica]: seq - 1 } : {},
      };
      Deno.writeTextFileSync(join(share, replica, recordName(seq)), recordText(record));
    }
  }
}

function p50(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]);
}

async function everyday(root: string, samples: number): Promise<Record<string, number>> {
  const times: Record<string, number[]> = { start: [], get: [], journal: [], "propose+sync": [] };
  for (let i = 0; i < samples; i++) {
    const start = await bimri(root, ["start", "--actor", "bench"]);
    times.start.push(start.ms);
    const run = /BIMRI RUN HANDLE: (R[0-9]{6})/.exec(start.out)![1];
    times.get.push((await bimri(root, ["get", "--key", "bench.everyday"])).ms);
    times.journal.push((await bimri(root, ["journal", "--run", run, "--text", `Note ${i}.`])).ms);
    const t0 = performance.now();
    await bimri(root, ["propose", "--run", run, "--key", "bench.everyday", "--text", `V${i}.`]);
    await bimri(root, ["sync", "--run", run]);
    times["propose+sync"].push(performance.now() - t0);
    await bimri(root, ["close", "--run", run, "--outcome", "success"]);
  }
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, p50(v)]));
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: { samples: { type: "string" }, keep: { type: "boolean" } },
  });
  const samples = Number(values.samples ?? "9");
  const base = await Deno.makeTempDir({ prefix: "bimri-share-bench-" });
  const replicas = Array.from({ length: 5 }, () => mintReplicaId()).sort();
  const figures: Record<string, unknown> = {};

  const chains = join(base, "chains");
  writeChains(chains, replicas, 2000);
  const pulled = await bimri(chains, ["share", "pull"]);
  console.log(`share pull, 10,000 records from 5 replicas (chains): ${Math.round(pulled.ms)} ms`);
  console.log(`  ${pulled.out.trim().split("\n").pop()}`);
  figures.pull_chains_ms = Math.round(pulled.ms);

  const distinct = join(base, "distinct");
  writeDistinct(distinct, replicas, 1000);
  const pulledDistinct = await bimri(distinct, ["share", "pull"]);
  console.log(
    `share pull, 1,000 records from 5 replicas (every record a new key): ${
      Math.round(pulledDistinct.ms)
    } ms`,
  );
  console.log(`  ${pulledDistinct.out.trim().split("\n").pop()}`);
  figures.pull_distinct_ms = Math.round(pulledDistinct.ms);

  const shared = join(base, "shared");
  const plain = join(base, "plain");
  for (const root of [shared, plain]) {
    Deno.mkdirSync(root);
    const start = await bimri(root, ["start", "--actor", "bench"]);
    const run = /BIMRI RUN HANDLE: (R[0-9]{6})/.exec(start.out)![1];
    await bimri(root, [
      "propose",
      "--run",
      run,
      "--tier",
      "2",
      "--new-subject",
      "--key",
      "bench.everyday",
      "--text",
      "V.",
    ]);
    await bimri(root, ["close", "--run", run, "--outcome", "success"]);
  }
  await bimri(shared, ["share", "init", "--yes"]);
  const a = await everyday(plain, samples);
  const b = await everyday(shared, samples);
  console.log(`everyday p50 over ${samples} runs (ms): command | unshared | shared | change`);
  for (const k of Object.keys(a)) {
    console.log(
      `  ${k.padEnd(13)} | ${String(a[k]).padStart(5)} | ${String(b[k]).padStart(5)} | ${
        ((b[k] / a[k] - 1) * 100).toFixed(1)
      }%`,
    );
  }
  figures.everyday_unshared = a;
  figures.everyday_shared = b;
  console.log(JSON.stringify(figures));
  if (!values.keep) await Deno.remove(base, { recursive: true });
  else console.log(`kept ${base}`);
}
