/**
 * Concurrency fuzz: several agents, each a loop of separate `deno run`
 * processes, work one store at the same time on a few shared keys (start,
 * edits, touches, new subjects, journal, reads, sync, index, close), so the
 * engine lock, stale-base detection and conflict growth meet real races.
 *
 *   deno task fuzz:concurrent [--seed 1] [--agents 6] [--sessions 8]
 *
 * Afterwards it requires: a full `doctor` that passes, no active run left, a
 * decision for every proposal, and no exit code 2 but the refusals a race
 * explains (a key changed after the run observed it, an intent already
 * pending, BIMRI busy). Exits 1 otherwise and keeps the store.
 */
import { parseArgs } from "node:util";
import { bimri, type CliResult, newSubject, startRun } from "../tests/helpers/cli.ts";
import { seededRandom } from "./harness.ts";

const KEYS = ["hot.k0", "hot.k1", "hot.k2", "hot.k3", "hot.k4"];
/** Refusals a race explains: the agent must sync, or retry. */
const EXPLAINED = /changed after this run observed it|is already pending for|BIMRI is busy/;

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      seed: { type: "string", default: "1" },
      agents: { type: "string", default: "6" },
      sessions: { type: "string", default: "8" },
    },
  });
  const seed = Number(values.seed);
  const root = await Deno.makeTempDir({ prefix: "bimri-fuzz-concurrent-" });
  const unexplained: string[] = [];
  const run = async (args: string[]): Promise<CliResult> => {
    const r = await bimri(root, args);
    if (r.code !== 0 && r.code !== 1 && !EXPLAINED.test(r.stderr)) {
      unexplained.push(`${args.join(" ")} -> ${r.code}: ${r.stderr.trim()}`);
    }
    return r;
  };
  const seedRun = await startRun(root, "agent");
  for (const key of KEYS) await run(newSubject(seedRun, key, `${key} v1.`));
  await run(["close", "--run", seedRun, "--outcome", "success"]);

  const agent = async (n: number) => {
    const random = seededRandom(seed * 1000 + n);
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
    for (let s = 0; s < Number(values.sessions); s++) {
      const started = await run(["start", "--actor", `agent${n}`]);
      const handle = /BIMRI RUN HANDLE: (R\d{6})/.exec(started.stdout)?.[1];
      if (!handle) continue;
      for (let step = 1 + Math.floor(random() * 3); step > 0; step--) {
        const key = pick(KEYS);
        const roll = random();
        if (roll < 0.55) {
          await run(["propose", "--run", handle, "--key", key, "--text", `${key} by ${handle}.`]);
        } else if (roll < 0.65) {
          await run(["propose", "--run", handle, "--operation", "touch", "--key", key]);
        } else if (roll < 0.75) {
          const fresh = `agent${n}.s${s}.${Math.floor(random() * 10)}`;
          await run(newSubject(handle, fresh, "Fresh."));
        } else if (roll < 0.85) {
          await run(["journal", "--run", handle, "--text", "A note."]);
        } else {
          await run(
            pick([["recall", "--query", "by"], ["get", "--key", key], ["status"], ["review"]]),
          );
        }
      }
      if (random() < 0.5) await run(["sync", "--run", handle]);
      if (random() < 0.1) await run(["index"]);
      await run(["close", "--run", handle, "--outcome", "success"]);
    }
  };
  await Promise.all(Array.from({ length: Number(values.agents) }, (_, n) => agent(n)));

  const problems = [...unexplained];
  const doctor = await bimri(root, ["doctor"]);
  if (doctor.code !== 0) problems.push(`doctor failed:\n${doctor.stdout}`);
  const state = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/state.json`));
  const active = Object.keys(state.active_runs);
  if (active.length > 0) problems.push(`runs left active: ${active.join(", ")}`);
  const ids = (folder: string) =>
    new Set([...Deno.readDirSync(`${root}/.bimri/${folder}`)].map((e) => e.name));
  const decisions = ids("decisions");
  const undecided = [...ids("proposals")].filter((name) => !decisions.has(name));
  if (undecided.length > 0) problems.push(`proposals without a decision: ${undecided.join(", ")}`);
  console.log(
    `seed ${seed}: ${state.run_count} runs, ${ids("proposals").size} proposals, ${
      ids("conflicts").size
    } conflicts, ${problems.length} problems`,
  );
  for (const problem of problems) console.log(`  ${problem}`);
  if (problems.length > 0) {
    console.log(`  store kept at ${root}`);
    return 1;
  }
  await Deno.remove(root, { recursive: true });
  return 0;
}

Deno.exit(await main());
