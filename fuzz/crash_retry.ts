/**
 * Crash fuzz: kills a write command with SIGKILL at a random moment, retries
 * it, and compares the memory with that of an uninterrupted run. Named fault
 * points (BIMRI_FAULT) stop a command between chosen durable steps; this
 * stops it anywhere, inside a temp-file write, between an append and the next
 * step, while another file is half renamed.
 *
 *   deno task fuzz:crash [--seed 1] [--iterations 100] [--only LABEL]
 *
 * Each iteration copies a small store with staged work on two active runs and
 * a concurrent edit of one key, runs one of sync, close, propose or resolve
 * as its own `deno run` process, kills it after a random share of that
 * command's measured duration, retries the same command, settles the runs
 * (sync both), and then requires: a retry that succeeds (or says the run is
 * closed or the intent already pending), a full `doctor` that passes, and the
 * same memory as the uninterrupted run: bimri.md (dates and entry numbers
 * aside, since an entry ID or a revision number a killed command took is not
 * reused, as in the reference), active runs, every decision's outcome and
 * conflict, the conflict files and the cold subjects. Linux and macOS only
 * (SIGKILL). Exits 1 when an iteration fails; the failing store is kept.
 */
import { parseArgs } from "node:util";
import {
  bimri,
  type CliResult,
  commandPrefix,
  must,
  newSubject,
  startRun,
} from "../tests/helpers/cli.ts";
import { seededRandom } from "./harness.ts";

/** A `cp -a` copy in a temp folder this fuzzer removes itself, so a failing one is kept. */
async function copy(from: string): Promise<string> {
  const to = await Deno.makeTempDir({ prefix: "bimri-fuzz-" });
  const out = await new Deno.Command("cp", { args: ["-a", `${from}/.`, to] }).output();
  if (!out.success) throw new Error(`cp -a ${from} failed`);
  return to;
}

/** A store with a closed seed run, two active runs with staged work, and one contested key. */
async function baseStore(): Promise<{ root: string; worker: string; other: string }> {
  const root = await Deno.makeTempDir({ prefix: "bimri-fuzz-base-" });
  const seed = await startRun(root, "seed");
  for (let i = 0; i < 6; i++) {
    await must(
      root,
      newSubject(seed, `ops.s${i}`, `Subject ${i} keeps the retry path idempotent.`),
    );
  }
  await must(root, ["close", "--run", seed, "--outcome", "success"]);
  const worker = await startRun(root, "worker");
  const other = await startRun(root, "other");
  const propose = (run: string, args: string[]) => must(root, ["propose", "--run", run, ...args]);
  await must(root, newSubject(worker, "ops.new", "Staged."));
  await propose(worker, ["--key", "ops.s1", "--text", "Subject 1 by the worker."]);
  await propose(worker, ["--operation", "close", "--key", "ops.s2"]);
  await propose(other, ["--key", "ops.s1", "--text", "Subject 1 by the other run."]);
  await propose(other, ["--key", "ops.s3", "--text", "Subject 3 by the other run."]);
  return { root, worker, other };
}

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(Deno.readTextFileSync(path));
}

function names(folder: string): string[] {
  return [...Deno.readDirSync(folder)].map((e) => e.name).filter((n) => n.endsWith(".json")).sort();
}

/** What must not depend on where a command was killed. */
function memory(root: string): string {
  const view = Deno.readTextFileSync(`${root}/bimri.md`)
    .replace(/\d{4}-\d{2}-\d{2}(T[\d:]+Z)?/g, "DATE")
    .replace(/R\d{6}-E\d{3}/g, "ENTRY");
  const state = readJson(`${root}/.bimri/state.json`);
  const decisions = names(`${root}/.bimri/decisions`).map((name) => {
    const d = readJson(`${root}/.bimri/decisions/${name}`);
    return `${name}:${d.outcome}:${d.conflict_id ?? ""}`;
  });
  return JSON.stringify({
    view,
    active: Object.keys(state.active_runs as object).sort(),
    decisions,
    conflicts: names(`${root}/.bimri/conflicts`),
    cold: Object.keys((state.cold_current ?? {}) as object).sort(),
  });
}

function acceptableRetry(r: CliResult): boolean {
  return r.code === 0 || /is not an active run|already pending/.test(r.stderr);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      seed: { type: "string", default: "1" },
      iterations: { type: "string", default: "100" },
      only: { type: "string" },
    },
  });
  const random = seededRandom(Number(values.seed));
  const base = await baseStore();
  const { worker, other } = base;
  const settle = async (root: string) => {
    await bimri(root, ["sync", "--run", other]);
    await bimri(root, ["sync", "--run", worker]);
  };
  // The other run synced first: the worker's sync or close raises the conflict.
  const afterOther = await copy(base.root);
  await bimri(afterOther, ["sync", "--run", other]);
  const contested = await copy(base.root);
  await settle(contested);
  const conflict = names(`${contested}/.bimri/conflicts`)[0]?.slice(0, -5);
  type Case = { label: string; from: string; args: string[] };
  const cases: Case[] = [
    { label: "sync", from: base.root, args: ["sync", "--run", worker] },
    { label: "close", from: base.root, args: ["close", "--run", worker, "--outcome", "success"] },
    { label: "sync other", from: base.root, args: ["sync", "--run", other] },
    { label: "sync raising", from: afterOther, args: ["sync", "--run", worker] },
    {
      label: "close raising",
      from: afterOther,
      args: ["close", "--run", worker, "--outcome", "partial"],
    },
    {
      label: "propose",
      from: base.root,
      args: ["propose", "--run", other, "--key", "ops.s4", "--text", "Subject 4 by the other run."],
    },
    ...(conflict
      ? ["current", "dismiss"].map((choice) => ({
        label: `resolve ${choice}`,
        from: contested,
        args: ["resolve", conflict, "--choose", choice, "--human-approved"],
      }))
      : []),
  ];
  const chosen = cases.filter((c) => !values.only || c.label.includes(values.only));
  if (chosen.length === 0) throw new Error(`no case matches --only ${values.only}`);
  // The uninterrupted outcome and duration of each case.
  const expected = new Map<Case, { memory: string; ms: number }>();
  for (const c of chosen) {
    const root = await copy(c.from);
    const started = performance.now();
    await bimri(root, c.args);
    const ms = performance.now() - started;
    await settle(root);
    expected.set(c, { memory: memory(root), ms });
    await Deno.remove(root, { recursive: true });
  }
  let failures = 0;
  const iterations = Number(values.iterations);
  for (let i = 0; i < iterations; i++) {
    const c = chosen[Math.floor(random() * chosen.length)];
    const { memory: want, ms } = expected.get(c)!;
    const root = await copy(c.from);
    const delay = ms * (0.45 + 0.6 * random());
    const [cmd, ...prefix] = commandPrefix();
    const child = new Deno.Command(cmd, {
      args: [...prefix, "--root", root, ...c.args],
      cwd: root,
      env: { TZ: "UTC" }, // as the helpers' runs before and after it
      stdout: "null",
      stderr: "null",
    }).spawn();
    let finished = false;
    const done = child.status.then(() => (finished = true));
    await new Promise((resolve) => setTimeout(resolve, delay));
    let killed = !finished;
    try {
      if (killed) child.kill("SIGKILL");
    } catch {
      killed = false; // it finished in the meantime
    }
    await done;
    const retry = await bimri(root, c.args);
    await settle(root);
    const doctor = await bimri(root, ["doctor"]);
    const got = memory(root);
    const ok = acceptableRetry(retry) && doctor.code === 0 && got === want;
    console.log(
      `${ok ? "ok" : "FAIL"} ${i} ${c.label} at ${delay.toFixed(0)} ms${killed ? " killed" : ""}`,
    );
    if (ok) {
      await Deno.remove(root, { recursive: true });
      continue;
    }
    failures++;
    console.log(`  retry ${retry.code}: ${retry.stderr.trim()}`);
    if (doctor.code !== 0) console.log(doctor.stdout);
    if (got !== want) console.log(`  memory differs\n  got:  ${got}\n  want: ${want}`);
    console.log(`  store kept at ${root}`);
  }
  for (const root of [base.root, afterOther, contested]) {
    await Deno.remove(root, { recursive: true });
  }
  console.log(`${iterations} iterations, ${failures} failed`);
  return failures === 0 ? 0 : 1;
}

Deno.exit(await main());
