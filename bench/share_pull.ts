/**
 * Benchmark of team memory (not a timed test):
 *
 * 0. The floor: `deno run` of an empty script with the same flags, which
 *    every figure below stands on (each is also printed as a multiple of it).
 * 1. `share pull` of 10,000 records from 5 replicas into a fresh clone, as a
 *    separate `deno run` process. Each replica writes 2,000 records: chains
 *    of edits over 100 keys of its own (each record replaces the replica's
 *    previous record of that key), and every 10th record also edits one key
 *    of the pool all replicas share, having seen the other replicas' records
 *    up to then (a causal successor). Only the newest effect of each chain is
 *    committed; superseded records cost a read and a hash check.
 * 2. The same pull with 1,000 records that each set a distinct key (every
 *    record a commit: the worst case per record).
 *    Both pulls run --pull-samples times, each into a fresh copy of the clone.
 * 3. Everyday commands (start, journal, propose, sync, close, get) on a shared
 *    and an unshared store of the same content, measured A/B interleaved:
 *    each command runs on both stores back to back, in an order that
 *    alternates every sample, so drift in the machine's load falls on both
 *    sides alike. p50 and p95 per command and their ratio shared/unshared;
 *    the median of the per-sample paired ratios; and, where python3 can
 *    report it (getrusage of the child), the ratio of CPU time (user + system), which another
 *    process's load on the shared cores disturbs far less than wall time.
 *
 *   deno run -A bench/share_pull.ts [--samples 25] [--pull-samples 3]
 *     [--only floor,chains,distinct,everyday] [--keep]
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { recordHash, recordText, type ShareRecord } from "../engine/share/record.ts";
import { loadSignatureChecks, verifyRecordHash } from "../engine/share/sign.ts";
import { ed25519PublicKey, ed25519Sign } from "../engine/model/ed25519.ts";
import {
  changeRecord,
  type HandReplica,
  handReplica,
  shareEntry,
} from "../tests/helpers/share_records.ts";
import { mintReplicaId, recordName } from "../engine/share/ids.ts";
import { RUN_PERMISSIONS } from "../engine/install/permissions.ts";
import { RUN_V8_FLAGS } from "../engine/install/v8_flags.ts";
import { timeProcess } from "./timing.ts";

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));

/** One process: wall time, and its CPU time (user + system) where python3 can report it. */
type Timed = { ms: number; cpuMs: number | null; out: string };

async function run(main: string, args: string[]): Promise<Timed> {
  const base = [Deno.execPath(), "run", "--quiet", ...RUN_V8_FLAGS, ...RUN_PERMISSIONS, main];
  const { ms, cpuMs, out, stderr, code } = await timeProcess([...base, ...args]);
  if (code !== 0) throw new Error(`${args.join(" ")} failed: ${stderr}`);
  return { ms, cpuMs, out };
}

function bimri(root: string, args: string[]): Promise<Timed> {
  return run(MAIN, ["--root", root, ...args]);
}

/** Each bench replica's signer (its folder publishes the public key). */
const signers = new Map<string, HandReplica>();

/** Creates `<share>/<replica>/` with a newly published key. */
function keyed(share: string, replica: string): void {
  signers.set(replica, handReplica(share, replica));
}

/** The record's file text, signed by its replica's key. */
function signedText(record: ShareRecord): string {
  return recordText(signers.get(record.replica)!.sign(record));
}

/** One change record of a bench replica. */
function change(
  replica: string,
  seq: number,
  key: string,
  text: string,
  replaces: string | null,
  vector: Record<string, number>,
): ShareRecord {
  return changeRecord(replica, seq, key, shareEntry(text), replaces, vector);
}

/** Records from two replicas set `conflictKeys` keys concurrently; the rest are chains of own keys. */
export function writeConflicts(
  root: string,
  replicas: string[],
  perReplica: number,
  conflictKeys: number,
): void {
  const share = join(root, ".bimri-share");
  for (const [r, replica] of replicas.entries()) {
    keyed(share, replica);
    const last = new Map<string, string>();
    for (let seq = 1; seq <= perReplica; seq++) {
      const contested = r < 2 && seq <= conflictKeys;
      const key = contested ? `bench.c.k${seq}` : `bench.r${r}.k${seq % 100}`;
      const record = change(
        replica,
        seq,
        key,
        `Replica ${r} record ${seq} on ${key}.`,
        contested ? null : last.get(key) ?? null,
        seq > 1 ? { [replica]: seq - 1 } : {},
      );
      last.set(key, `${replica}:${seq}`);
      Deno.writeTextFileSync(join(share, replica, recordName(seq)), signedText(record));
    }
  }
}

/**
 * In-process cost of signing and verifying one record (what a record adds to
 * export and pull): signing as an export does (engine/model/ed25519.ts, the
 * first signature of a process included), verifying as a pull does.
 */
function signingCost(replica: string, count: number): { signMs: number; verifyMs: number } {
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const publicKey = ed25519PublicKey(seed).toBase64({ alphabet: "base64url", omitPadding: true });
  const records: ShareRecord[] = [];
  for (let seq = 1; seq <= count; seq++) {
    const vector = seq > 1 ? { [replica]: seq - 1 } : {};
    records.push(change(replica, seq, `bench.s.k${seq}`, `Signed ${seq}.`, null, vector));
  }
  const message = (record: ShareRecord) =>
    new TextEncoder().encode(`bimri-share/1 record ${recordHash(record)}`);
  let t = performance.now();
  const signed: ShareRecord[] = [];
  for (const record of records) {
    const signature = ed25519Sign(seed, message(record));
    const one = {
      ...record,
      signature: signature.toBase64({ alphabet: "base64url", omitPadding: true }),
    };
    recordText(one); // the text an export writes
    signed.push(one);
  }
  const signMs = (performance.now() - t) / count;
  t = performance.now();
  for (const record of signed) {
    if (!verifyRecordHash(publicKey, recordHash(record), record.signature!)) {
      throw new Error("a bench signature does not verify");
    }
  }
  const verifyMs = (performance.now() - t) / count;
  return { signMs, verifyMs };
}

/** Writes `perReplica` records for each of `replicas` into `<root>/.bimri-share/`. */
export function writeChains(root: string, replicas: string[], perReplica: number): void {
  const share = join(root, ".bimri-share");
  const lastOfKey = new Map<string, string>();
  for (const [r, replica] of replicas.entries()) {
    keyed(share, replica);
    for (let seq = 1; seq <= perReplica; seq++) {
      const sharedPool = seq % 10 === 0;
      const key = sharedPool ? `bench.shared.k${(seq / 10) % 20}` : `bench.r${r}.k${seq % 100}`;
      // Shared-pool edits saw every earlier replica's whole chain (they were pulled first).
      const vector: Record<string, number> = {};
      for (let q = 0; q < r; q++) vector[replicas[q]] = perReplica;
      if (seq > 1) vector[replica] = seq - 1;
      const record = change(
        replica,
        seq,
        key,
        `Replica ${r} record ${seq} on ${key}.`,
        lastOfKey.get(key) ?? null,
        vector,
      );
      lastOfKey.set(key, `${replica}:${seq}`);
      Deno.writeTextFileSync(join(share, replica, recordName(seq)), signedText(record));
    }
  }
}

/** Writes `count` records that each set a distinct key, spread over `replicas`. */
export function writeDistinct(root: string, replicas: string[], count: number): void {
  const share = join(root, ".bimri-share");
  const per = count / replicas.length;
  for (const [r, replica] of replicas.entries()) {
    keyed(share, replica);
    for (let seq = 1; seq <= per; seq++) {
      const record = change(replica, seq, `bench.d${r}.k${seq}`, `Distinct ${r}.${seq}.`, null, {});
      Deno.writeTextFileSync(join(share, replica, recordName(seq)), signedText(record));
    }
  }
}

/** The `q` quantile of `values` (nearest rank), rounded to a millisecond. */
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(
    sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1))],
  );
}

/** The `q` quantile of `values` (nearest rank), unrounded. */
function quantileRaw(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1))];
}

/** A time as a multiple of the floor's p50. */
function times(ms: number, floor: number): string {
  return floor > 0 ? `${(ms / floor).toFixed(1)}x floor` : "";
}

async function copyTree(from: string, to: string): Promise<void> {
  const out = await new Deno.Command("cp", { args: ["-a", from, to] }).output();
  if (out.code !== 0) throw new Error(`cp -a ${from} ${to} failed`);
}

/**
 * Pulls a fresh copy of `template` `samples` times; the last pull's summary line.
 *
 * Every copy is made before the first pull and none is removed here: the
 * bench folder goes only when the whole bench ends. On ext4 without a journal
 * (this workplace's disks), a new file's inode allocation skips, one by one,
 * every inode freed in about the last minute, so removing thousands of files
 * right before a pull bills the bench's own cleanup to that pull's file
 * creations (a clean 1.5 s pull then measures 3 s). Journaled ext4, APFS and
 * NTFS have no such skip.
 */
async function pulls(
  base: string,
  template: string,
  samples: number,
): Promise<{ ms: number[]; cpu: number[]; summary: string; roots: string[] }> {
  const ms: number[] = [];
  const cpu: number[] = [];
  let summary = "";
  const roots: string[] = [];
  for (let i = 0; i < samples; i++) {
    const root = join(base, `${template.split("/").pop()}-${i}`);
    roots.push(root);
    await copyTree(template, root);
  }
  for (const root of roots) {
    const pulled = await bimri(root, ["share", "pull"]);
    ms.push(pulled.ms);
    if (pulled.cpuMs !== null) cpu.push(pulled.cpuMs);
    summary = pulled.out.trim().split("\n").pop() ?? "";
  }
  return { ms, cpu, summary, roots };
}

type Side = "unshared" | "shared";
const EVERYDAY = ["start", "journal", "propose", "sync", "get", "close"] as const;

/**
 * One cycle of an agent's session per sample on both stores, each command
 * run on both sides back to back; odd samples run the shared side first.
 */
type Everyday = {
  /** Wall times per side and command. */
  wall: Record<Side, Record<string, number[]>>;
  /** CPU times (user + system) per side and command (empty without python3). */
  cpu: Record<Side, Record<string, number[]>>;
  /** Per sample, shared wall time over the unshared one run right beside it. */
  paired: Record<string, number[]>;
  /** Wall times of the shared clone's `share status` after each session: its export at commit. */
  exportAtCommit: number[];
};

async function everyday(roots: Record<Side, string>, samples: number): Promise<Everyday> {
  const out: Everyday = {
    wall: { unshared: {}, shared: {} },
    cpu: { unshared: {}, shared: {} },
    paired: {},
    exportAtCommit: [],
  };
  for (const c of EVERYDAY) {
    out.paired[c] = [];
    for (const side of ["unshared", "shared"] as const) {
      out.wall[side][c] = [];
      out.cpu[side][c] = [];
    }
  }
  for (let i = 0; i < samples; i++) {
    const order: Side[] = i % 2 === 0 ? ["unshared", "shared"] : ["shared", "unshared"];
    const runs: Record<Side, string> = { unshared: "", shared: "" };
    const args = (side: Side, command: string): string[] => {
      const r = runs[side];
      switch (command) {
        case "start":
          return ["start", "--actor", "bench"];
        case "journal":
          return ["journal", "--run", r, "--text", `Note ${i}.`];
        case "propose":
          return ["propose", "--run", r, "--key", "bench.everyday", "--text", `V${i}.`];
        case "sync":
          return ["sync", "--run", r];
        case "get":
          return ["get", "--key", "bench.everyday"];
        default:
          return ["close", "--run", r, "--outcome", "success"];
      }
    };
    for (const command of EVERYDAY) {
      const wall: Partial<Record<Side, number>> = {};
      for (const side of order) {
        const done = await bimri(roots[side], args(side, command));
        wall[side] = done.ms;
        out.wall[side][command].push(done.ms);
        if (done.cpuMs !== null) out.cpu[side][command].push(done.cpuMs);
        if (command === "start") runs[side] = /BIMRI RUN HANDLE: (R[0-9]{6})/.exec(done.out)![1];
      }
      out.paired[command].push(wall.shared! / wall.unshared!);
    }
    // The session's change is exported when it is committed: the pre-commit
    // hook runs `share status` (the everyday verbs leave it for then).
    out.exportAtCommit.push((await bimri(roots.shared, ["share", "status"])).ms);
  }
  return out;
}

/** Builds a store with one Tier 2 subject (and, when `shared`, makes it a replica). */
async function everydayStore(root: string, shared: boolean): Promise<void> {
  Deno.mkdirSync(root);
  const start = await bimri(root, ["start", "--actor", "bench"]);
  const r = /BIMRI RUN HANDLE: (R[0-9]{6})/.exec(start.out)![1];
  await bimri(root, [
    "propose",
    "--run",
    r,
    "--tier",
    "2",
    "--new-subject",
    "--key",
    "bench.everyday",
    "--text",
    "V.",
  ]);
  await bimri(root, ["close", "--run", r, "--outcome", "success"]);
  if (shared) {
    // share init needs a git work tree.
    await new Deno.Command("git", { args: ["init", "-q"], cwd: root }).output();
    await bimri(root, ["share", "init", "--yes"]);
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      samples: { type: "string" },
      "pull-samples": { type: "string" },
      only: { type: "string" },
      keep: { type: "boolean" },
    },
  });
  const samples = Number(values.samples ?? "25");
  const pullSamples = Number(values["pull-samples"] ?? "3");
  const only = new Set(
    (values.only ?? "floor,signing,chains,distinct,conflicts400,conflicts1000,everyday").split(","),
  );
  const base = await Deno.makeTempDir({ prefix: "bimri-share-bench-" });
  const replicas = Array.from({ length: 5 }, () => mintReplicaId()).sort();
  const figures: Record<string, unknown> = { date: new Date().toISOString().slice(0, 10) };
  console.log(`${navigator.hardwareConcurrency} cores; ${Deno.build.os}/${Deno.build.arch}`);

  let floor = 0;
  if (only.has("floor")) {
    const empty = join(base, "empty.ts");
    Deno.writeTextFileSync(empty, "export {};\n");
    const bare: number[] = [];
    for (let i = 0; i < Math.max(samples, 9); i++) bare.push((await run(empty, [])).ms);
    floor = quantile(bare, 0.5);
    console.log(
      `floor: deno run of an empty script: p50 ${floor} ms, p95 ${quantile(bare, 0.95)} ms`,
    );
    figures.floor = { p50: floor, p95: quantile(bare, 0.95) };
  }

  if (only.has("signing")) {
    await loadSignatureChecks();
    const cost = signingCost(mintReplicaId(), 2000);
    console.log(
      `signing: ${cost.signMs.toFixed(3)} ms to sign and write the text of a record, ${
        cost.verifyMs.toFixed(3)
      } ms to verify one (2,000 records, in process)`,
    );
    figures.signing = cost;
  }

  for (
    const [name, label, write] of [
      [
        "conflicts400",
        "share pull, 1,200 records from 3 replicas, 400 conflicts",
        (root: string) => writeConflicts(root, replicas.slice(0, 3), 400, 400),
      ],
      [
        "conflicts1000",
        "share pull, 10,000 records from 5 replicas, 1,000 conflicts",
        (root: string) => writeConflicts(root, replicas, 2000, 1000),
      ],
      [
        "chains",
        "share pull, 10,000 records from 5 replicas (chains)",
        (root: string) => writeChains(root, replicas, 2000),
      ],
      [
        "distinct",
        "share pull, 1,000 records from 5 replicas (every record a new key)",
        (root: string) => writeDistinct(root, replicas, 1000),
      ],
    ] as const
  ) {
    if (!only.has(name)) continue;
    const template = join(base, name);
    write(template);
    // The owner trusts every replica of the template once (its copies inherit it).
    for (const replica of replicas) {
      try {
        Deno.lstatSync(join(template, ".bimri-share", replica));
      } catch {
        continue;
      }
      await bimri(template, ["share", "trust", replica, "--human-approved"]);
    }
    const got = await pulls(base, template, pullSamples);
    const p50 = quantile(got.ms, 0.5);
    console.log(
      `${label}: p50 ${p50} ms (${times(p50, floor)}), min ${quantile(got.ms, 0)} ms, max ${
        quantile(got.ms, 1)
      } ms over ${pullSamples}`,
    );
    console.log(`  ${got.summary}`);
    const cpu = got.cpu.length ? quantile(got.cpu, 0.5) : null;
    if (cpu !== null) console.log(`  CPU time (user + system) p50 ${cpu} ms`);
    figures[`pull_${name}`] = { p50, cpu_p50: cpu, samples: got.ms.map(Math.round) };
    if (name === "chains") {
      // An everyday start on the clone that holds them: it must not list 10,000 names each time.
      const starts: number[] = [];
      for (let i = 0; i < Math.min(samples, 11); i++) {
        starts.push((await bimri(got.roots[0], ["start", "--actor", "bench"])).ms);
      }
      const start = quantile(starts, 0.5);
      console.log(
        `  start on the clone that pulled them: p50 ${start} ms (${times(start, floor)})`,
      );
      figures.start_after_chains = { p50: start };
    }
  }

  if (only.has("everyday")) {
    const roots: Record<Side, string> = {
      unshared: join(base, "plain"),
      shared: join(base, "shared"),
    };
    await everydayStore(roots.unshared, false);
    await everydayStore(roots.shared, true);
    const got = await everyday(roots, samples);
    console.log(
      `everyday commands, A/B interleaved over ${samples} samples (ms): command | unshared p50 p95 | shared p50 p95 | ratio p50 p95 | paired ratio p50 | cpu ratio p50 p95`,
    );
    const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
    const table: Record<string, Record<string, number | null>> = {};
    for (const c of EVERYDAY) {
      const u50 = quantile(got.wall.unshared[c], 0.5);
      const u95 = quantile(got.wall.unshared[c], 0.95);
      const s50 = quantile(got.wall.shared[c], 0.5);
      const s95 = quantile(got.wall.shared[c], 0.95);
      const paired = Math.round(quantileRaw(got.paired[c], 0.5) * 100) / 100;
      const hasCpu = got.cpu.shared[c].length > 0 && got.cpu.unshared[c].length > 0;
      const c50 = hasCpu
        ? ratio(quantile(got.cpu.shared[c], 0.5), quantile(got.cpu.unshared[c], 0.5))
        : null;
      const c95 = hasCpu
        ? ratio(quantile(got.cpu.shared[c], 0.95), quantile(got.cpu.unshared[c], 0.95))
        : null;
      const r50 = ratio(s50, u50);
      const r95 = ratio(s95, u95);
      console.log(
        `  ${c.padEnd(8)} | ${String(u50).padStart(4)} ${String(u95).padStart(4)} | ${
          String(s50).padStart(4)
        } ${String(s95).padStart(4)} | ${r50.toFixed(2)} ${r95.toFixed(2)} | ${
          paired.toFixed(2)
        } | ${c50?.toFixed(2) ?? "n/a"} ${c95?.toFixed(2) ?? "n/a"}${
          r50 > 1.1 || paired > 1.1 ? "  (over 1.10)" : ""
        }`,
      );
      table[c] = {
        unshared_p50: u50,
        unshared_p95: u95,
        shared_p50: s50,
        shared_p95: s95,
        ratio_p50: r50,
        ratio_p95: r95,
        paired_ratio_p50: paired,
        cpu_ratio_p50: c50,
        cpu_ratio_p95: c95,
      };
    }
    figures.everyday = table;
    const e50 = quantile(got.exportAtCommit, 0.5);
    const e95 = quantile(got.exportAtCommit, 0.95);
    console.log(
      `  export at commit (share status after each session, one change): p50 ${e50} ms, p95 ${e95} ms`,
    );
    figures.export_at_commit = { p50: e50, p95: e95 };
  }
  console.log(JSON.stringify(figures));
  if (!values.keep) await Deno.remove(base, { recursive: true });
  else console.log(`kept ${base}`);
}
