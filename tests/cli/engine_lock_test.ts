/**
 * The engine lock never makes a command wait forever. Another process holds
 * `.bimri/engine.lock` (a real flock, from a separate holder process) while
 * bimri commands run: a writer (journal) and a reader (get) give up after the
 * lock timeout with "BIMRI is busy" and exit 2, having changed no file; once
 * the holder lets go the same commands succeed, and a command that is still
 * waiting when the holder lets go carries on by itself. The long-lived MCP
 * server reports busy as a tool error and keeps no lock behind.
 *
 * BIMRI_LOCK_TIMEOUT_MS shortens the 10 s timeout so a refusal costs seconds,
 * not tens of them. Every command also runs under a guard that kills it after
 * GUARD_MS, so an engine that waits without limit fails these tests instead of
 * hanging them.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  type CliResult,
  diffTrees,
  expectOk as ok,
  hashTree,
  must,
  newSubject,
  startRun,
  tempStore,
} from "../helpers/cli.ts";
import { holdEngineLock } from "../helpers/lock_holder.ts";
import { callTool, connectMcp, dataOf, textOf } from "./mcp_support.ts";

/** The shortened lock timeout of the commands expected to give up. */
const SHORT_TIMEOUT_MS = 1500;
/** After this long a command is killed: far beyond any timeout used here. */
const GUARD_MS = 30_000;
const BUSY = "BIMRI ERROR: BIMRI is busy. Retry the command.\n";

/** One guarded command: its result and how long it took from spawn to exit. */
type Timed = CliResult & { ms: number };

/** Runs bimri with `env`, killed after GUARD_MS (a killed command exits with a signal code, not 2). */
async function guarded(
  root: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Timed> {
  const abort = new AbortController();
  const guard = setTimeout(() => abort.abort(), GUARD_MS);
  const began = performance.now();
  try {
    const result = await bimri(root, args, { env, signal: abort.signal });
    return { ...result, ms: performance.now() - began };
  } finally {
    clearTimeout(guard);
  }
}

/** A store with accepted memory (`ops.retry`) and an open run for journal entries. */
async function seededStore(): Promise<{ root: string; run: string }> {
  const root = await tempStore();
  const seed = await startRun(root, "seed");
  ok(await bimri(root, newSubject(seed, "ops.retry", "Retry three times.")), "propose");
  ok(await bimri(root, ["close", "--run", seed, "--outcome", "success"]), "close");
  return { root, run: await startRun(root, "codex") };
}

/** Asserts `result` is the busy refusal, given after the short timeout and not much later. */
function assertBusy(result: Timed, what: string): void {
  assertEquals(result.code, 2, `${what}: ${result.stderr}`);
  assertEquals(result.stderr, BUSY, what);
  assertEquals(result.stdout, "", what);
  assert(
    result.ms >= SHORT_TIMEOUT_MS,
    `${what} gave up after ${result.ms} ms, before the timeout`,
  );
  // Well below the 10 s default: the command honoured the shortened timeout.
  assert(result.ms < 9000, `${what} took ${result.ms} ms to give up`);
}

Deno.test("with the engine lock held elsewhere, journal and get stop as busy and write nothing; afterwards they work", async () => {
  const { root, run } = await seededStore();
  const before = hashTree(root);
  const short = { BIMRI_LOCK_TIMEOUT_MS: String(SHORT_TIMEOUT_MS) };
  const holder = await holdEngineLock(root);
  let released = false;
  try {
    const [journal, get, getJson] = await Promise.all([
      guarded(root, ["journal", "--run", run, "--text", "Blocked entry."], short),
      guarded(root, ["get", "--key", "ops.retry"], short),
      guarded(root, ["--json", "get", "--key", "ops.retry"], short),
    ]);
    assertBusy(journal, "journal");
    assertBusy(get, "get");
    assertEquals(getJson.code, 2, getJson.stderr);
    assertEquals(JSON.parse(getJson.stdout).error.code, "busy");
    assertEquals(diffTrees(before, hashTree(root)), null);
    await holder.release();
    released = true;
  } finally {
    if (!released) await holder.release();
  }
  const journal = ok(
    await guarded(root, ["journal", "--run", run, "--text", "Entry after the release."], short),
    "journal after release",
  );
  assertEquals(journal.stdout, `${run}-E001\n`);
  const get = ok(await guarded(root, ["get", "--key", "ops.retry"], short), "get after release");
  assertMatch(get.stdout, /Retry three times\./);
});

Deno.test("a shared lock held elsewhere lets get read but makes journal busy", async () => {
  const { root, run } = await seededStore();
  const short = { BIMRI_LOCK_TIMEOUT_MS: String(SHORT_TIMEOUT_MS) };
  const holder = await holdEngineLock(root, true);
  try {
    const [journal, get] = await Promise.all([
      guarded(root, ["journal", "--run", run, "--text", "Blocked entry."], short),
      guarded(root, ["get", "--key", "ops.retry"], short),
    ]);
    assertBusy(journal, "journal");
    assertEquals(get.code, 0, get.stderr);
    assertMatch(get.stdout, /Retry three times\./);
  } finally {
    await holder.release();
  }
});

Deno.test("doctor, with and without --read-only, audits under the lock: a writer's half-done commit is never read as damage", async () => {
  const { root, run } = await seededStore();
  const short = { BIMRI_LOCK_TIMEOUT_MS: String(SHORT_TIMEOUT_MS) };
  const holder = await holdEngineLock(root);
  let released = false;
  try {
    // What a writer holding the lock may leave mid-commit: a proposal file whose
    // log marker is not written yet.
    const log = `${root}/.bimri/log/${run}.md`;
    const before = Deno.readTextFileSync(log);
    Deno.writeTextFileSync(
      log,
      before + `[PROPOSE:${run}-Q009] [set] [K:x.y] [BASE:absent] half\n`,
    );
    const [readOnly, plain] = await Promise.all([
      guarded(root, ["doctor", "--read-only"], short),
      guarded(root, ["doctor"], short),
    ]);
    assertBusy(readOnly, "doctor --read-only");
    assertBusy(plain, "doctor");
    Deno.writeTextFileSync(log, before);
    await holder.release();
    released = true;
  } finally {
    if (!released) await holder.release();
  }
  const after = ok(await guarded(root, ["doctor", "--read-only"], short), "doctor after release");
  assertMatch(after.stdout, /^BIMRI doctor \(read-only\): PASSED$/m);
});

Deno.test("a command waiting for the engine lock proceeds when the holder lets go before the timeout", async () => {
  const { root, run } = await seededStore();
  const holder = await holdEngineLock(root);
  let released = false;
  // The waiters use the default 10 s timeout.
  const journalWait = guarded(root, ["journal", "--run", run, "--text", "Waited entry."]);
  const getWait = guarded(root, ["get", "--key", "ops.retry"]);
  try {
    // Started after the waiters, this one gives up after the short timeout:
    // by then the waiters have long been waiting for the lock too.
    const probe = await guarded(root, ["get", "--key", "ops.retry"], {
      BIMRI_LOCK_TIMEOUT_MS: String(SHORT_TIMEOUT_MS),
    });
    assertBusy(probe, "probe get");
    await holder.release();
    released = true;
  } finally {
    if (!released) await holder.release();
  }
  const [journal, get] = await Promise.all([journalWait, getWait]);
  assertEquals(journal.code, 0, journal.stderr);
  assertEquals(journal.stdout, `${run}-E001\n`);
  assertEquals(get.code, 0, get.stderr);
  assertMatch(get.stdout, /Retry three times\./);
  // They finished only after the release, so they really waited for it.
  assert(journal.ms >= SHORT_TIMEOUT_MS && get.ms >= SHORT_TIMEOUT_MS);
});

Deno.test("the MCP server reports busy as a tool error and holds no lock afterwards", async () => {
  const { root } = await seededStore();
  const short = { BIMRI_LOCK_TIMEOUT_MS: String(SHORT_TIMEOUT_MS) };
  const mcp = await connectMcp(root, "mcp-agent", short);
  try {
    const run = String(dataOf(await callTool(mcp, "memory_start", { actor: "mcpagent" })).run);
    const holder = await holdEngineLock(root);
    let released = false;
    try {
      const [journal, recall] = await Promise.all([
        callTool(mcp, "memory_journal", { text: "Blocked entry." }),
        callTool(mcp, "memory_recall", { key: "ops.retry" }),
      ]);
      for (const result of [journal, recall]) {
        assert(result.isError, textOf(result));
        assertMatch(textOf(result), /BIMRI is busy\. Retry the command\./);
      }
      await holder.release();
      released = true;
    } finally {
      if (!released) await holder.release();
    }
    assertEquals(
      dataOf(await callTool(mcp, "memory_journal", { text: "Later." })).entry_id,
      `${run}-E001`,
    );
    // The server is still running: a CLI writer gets the lock at once, so the
    // server kept none of the locks it gave up on.
    const cli = ok(
      await guarded(root, ["journal", "--run", run, "--text", "From the CLI."], {
        BIMRI_LOCK_TIMEOUT_MS: "0",
      }),
      "CLI journal beside the server",
    );
    assertEquals(cli.stdout, `${run}-E002\n`);
  } finally {
    await mcp.close();
  }
});

Deno.test("a symbolic link in place of engine.lock or state.json stops writers and readers, changing nothing", async () => {
  const cases: [string, RegExp][] = [
    [
      ".bimri/engine.lock",
      /\.bimri\/engine\.lock is (?:a symbolic link|missing or not a regular file)/,
    ],
    [".bimri/state.json", /\.bimri\/state\.json is a symbolic link/],
  ];
  for (const [file, message] of cases) {
    const root = await tempStore();
    const run = await startRun(root);
    const real = join(root, "..", crypto.randomUUID());
    Deno.renameSync(join(root, file), real);
    Deno.symlinkSync(real, join(root, file), { type: "file" });
    const before = hashTree(root);
    for (const args of [["journal", "--run", run, "--text", "Linked."], ["get", "--key", "a.b"]]) {
      const r = await bimri(root, args);
      assertEquals(r.code, 2, `${file} ${args[0]}: ${r.stdout}`);
      assertMatch(r.stderr, message, `${file} ${args[0]}`);
      assertEquals(diffTrees(before, hashTree(root)), null, `${file} ${args[0]}`);
    }
    Deno.removeSync(real);
  }
});

Deno.test("a reader refuses a missing engine.lock without creating it and names the repair; status recreates it", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  await must(root, newSubject(run, "lock.subject", "Value read after the lock file vanishes."));
  await must(root, ["sync", "--run", run]);
  Deno.removeSync(`${root}/.bimri/engine.lock`);
  const before = hashTree(root);
  const refused = await bimri(root, ["get", "--key", "lock.subject"]);
  assertEquals(refused.code, 2, refused.stdout);
  assertMatch(refused.stderr, /Run status or doctor once \(either recreates a missing lock file\)/);
  assertEquals(diffTrees(before, hashTree(root)), null, "the reader wrote nothing");
  await must(root, ["status"]);
  assert(Deno.lstatSync(`${root}/.bimri/engine.lock`).isFile, "status recreated the lock");
  assertMatch(await must(root, ["get", "--key", "lock.subject"]), /^HOT\tlock\.subject\t/);
});
