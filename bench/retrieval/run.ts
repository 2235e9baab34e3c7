/**
 * Retrieval benchmark: builds the store of bench/retrieval/corpus.ts through
 * the CLI (start, propose, sync, close), then asks each question of one half
 * on the CLI (one `deno run` process per question, as an agent's shell does)
 * and through one resident `bimri mcp` server, and prints recall@1, recall@3
 * and MRR (within the first 10 matches) for the default mode and for `--rank`.
 *
 *   deno run -A bench/retrieval/run.ts [--half tuning|held-out|both] [--no-cli] [--no-mcp]
 *       [--show-misses]
 *
 * The held-out half (odd positions of QUESTIONS) is for the final figures
 * only: never tune the ranking on it.
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { runCli } from "../../main.ts";
import { RUN_PERMISSIONS } from "../../engine/install/permissions.ts";
import { RUN_V8_FLAGS } from "../../engine/install/v8_flags.ts";
import { type BenchEntry, type BenchQuestion, ENTRIES, half } from "./corpus.ts";

const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));
const RUN_FLAGS = [...RUN_V8_FLAGS, ...RUN_PERMISSIONS];
/** Matches looked at per question (MRR counts a hit up to this rank). */
const DEPTH = 10;

async function cli(root: string, args: string[]): Promise<string> {
  let out = "";
  let err = "";
  const code = await runCli(["--root", root, ...args], {
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
  });
  if (code !== 0) throw new Error(`${args.join(" ")} failed (${code}): ${err}`);
  return out;
}

function proposal(run: string, entry: BenchEntry, text: string, isNew: boolean): string[] {
  const args = ["propose", "--run", run, "--key", entry.key, "--tier", String(entry.tier)];
  if (isNew) args.push("--new-subject");
  // Core (Tier 1) memory is what the owner stated; Tier 2 is the agents' own.
  if (entry.tier === 1) args.push("--source", "user", "--trust", "confirmed");
  if (entry.kind) args.push("--kind", entry.kind);
  if (entry.importance) args.push("--importance", String(entry.importance));
  return [...args, "--tags", entry.tags.join(","), "--text", text];
}

/** Builds the benchmark store in a new temporary folder and returns its path. */
export async function buildStore(): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "bimri-retrieval-bench-" });
  const handle = (brief: string) => /BIMRI RUN HANDLE: (R\d{6})/.exec(brief)![1];
  // First run: every subject, earlier generations where there are some.
  let run = handle(await cli(root, ["start", "--actor", "bench"]));
  for (const entry of ENTRIES) {
    await cli(root, proposal(run, entry, entry.earlier?.[0] ?? entry.text, true));
  }
  await cli(root, ["sync", "--run", run]);
  await cli(root, ["close", "--run", run, "--outcome", "success", "--summary", "Seeded."]);
  // Later runs: replace the earlier generations, so they end in history.
  const depth = Math.max(...ENTRIES.map((e) => e.earlier?.length ?? 0));
  for (let g = 1; g <= depth; g++) {
    run = handle(await cli(root, ["start", "--actor", "bench"]));
    for (const entry of ENTRIES) {
      const earlier = entry.earlier ?? [];
      if (earlier.length < g) continue;
      await cli(root, proposal(run, entry, earlier[g] ?? entry.text, false));
    }
    await cli(root, ["close", "--run", run, "--outcome", "success", "--summary", "Updated."]);
  }
  return root;
}

/** Ranked keys of one CLI question (empty on exit 1). */
async function askCli(root: string, query: string, rank: boolean): Promise<string[]> {
  const args = ["recall", "--query", query, "--json", "--limit", String(DEPTH)];
  if (rank) args.push("--rank");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...RUN_FLAGS, MAIN, "--root", root, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.code === 1) return [];
  if (out.code !== 0) throw new Error(`recall failed: ${new TextDecoder().decode(out.stderr)}`);
  const doc = JSON.parse(new TextDecoder().decode(out.stdout)) as { matches: { key: string }[] };
  return doc.matches.map((m) => m.key);
}

/** Figures of one mode over one half. */
type Score = { n: number; r1: number; r3: number; mrr: number; misses: string[] };

function score(questions: BenchQuestion[], answers: string[][]): Score {
  let r1 = 0, r3 = 0, mrr = 0;
  const misses: string[] = [];
  questions.forEach((question, i) => {
    const at = answers[i].findIndex((key) => question.expect.includes(key));
    if (at === 0) r1++;
    if (at >= 0 && at < 3) r3++;
    if (at >= 0) mrr += 1 / (at + 1);
    if (at < 0 || at >= 3) {
      misses.push(`${question.q} -> ${answers[i].slice(0, 3).join(", ") || "(none)"}`);
    }
  });
  const n = questions.length;
  const round = (v: number) => Math.round((v / n) * 1000) / 1000;
  return { n, r1: round(r1), r3: round(r3), mrr: round(mrr), misses };
}

/** A resident `bimri mcp` server and a function asking memory_recall. */
async function connectMcp(root: string) {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "--quiet", ...RUN_FLAGS, MAIN, "--root", root, "mcp"],
    stderr: "pipe",
  });
  const client = new Client({ name: "bimri-retrieval-bench", version: "1" });
  await client.connect(transport);
  const ask = async (query: string, rank: boolean | undefined): Promise<string[]> => {
    const args: Record<string, unknown> = { query, limit: DEPTH };
    if (rank !== undefined) args.rank = rank;
    const result = await client.callTool({ name: "memory_recall", arguments: args });
    if (result.isError) throw new Error(`memory_recall: ${JSON.stringify(result.content)}`);
    const data = result.structuredContent as { matches?: { key: string }[] } | undefined;
    return (data?.matches ?? []).map((m) => m.key);
  };
  return { ask, close: () => client.close() };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      half: { type: "string", default: "tuning" },
      "no-cli": { type: "boolean", default: false },
      "no-mcp": { type: "boolean", default: false },
      "show-misses": { type: "boolean", default: false },
    },
  });
  const halves = values.half === "both"
    ? ["tuning", "held-out"] as const
    : values.half === "held-out"
    ? ["held-out"] as const
    : ["tuning"] as const;
  const root = await buildStore();
  const rows: { half: string; mode: string; score: Score }[] = [];
  try {
    for (const name of halves) {
      const questions = half(name);
      if (!values["no-cli"]) {
        for (const rank of [false, true]) {
          const answers: string[][] = [];
          for (const question of questions) answers.push(await askCli(root, question.q, rank));
          rows.push({
            half: name,
            mode: rank ? "cli --rank" : "cli default",
            score: score(questions, answers),
          });
        }
      }
      if (!values["no-mcp"]) {
        const server = await connectMcp(root);
        try {
          for (
            const [mode, rank] of [["mcp rank:false", false], ["mcp (no rank arg)", undefined], [
              "mcp rank:true",
              true,
            ]] as const
          ) {
            const answers: string[][] = [];
            for (const question of questions) answers.push(await server.ask(question.q, rank));
            rows.push({ half: name, mode, score: score(questions, answers) });
          }
        } finally {
          await server.close();
        }
      }
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
  console.log(`entries ${ENTRIES.length}; matches looked at per question: ${DEPTH}`);
  console.log(["half", "mode", "questions", "recall@1", "recall@3", "MRR"].join("\t"));
  for (const { half, mode, score: s } of rows) {
    console.log([half, mode, s.n, s.r1.toFixed(3), s.r3.toFixed(3), s.mrr.toFixed(3)].join("\t"));
    if (values["show-misses"]) { for (const miss of s.misses) console.log(`    miss: ${miss}`); }
  }
  console.log(JSON.stringify(rows.map(({ half, mode, score: s }) => ({
    half,
    mode,
    n: s.n,
    recall1: s.r1,
    recall3: s.r3,
    mrr: s.mrr,
  }))));
}

if (import.meta.main) await main();
