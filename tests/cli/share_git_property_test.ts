/**
 * Seeded property test of team memory through real git: three clones of one
 * bare repository (one with core.autocrlf=true in its own config) make random
 * agent sessions and random git moves (commit, pull --rebase, merge pull,
 * push, stash -u then drop, clean, a branch that is abandoned). Then every
 * clone pulls, the owner answers what is open, and the test checks: no git
 * command conflicted (on a bimri file or any other), every key's whole entry
 * is the same in every clone, and the read-only doctor passes everywhere.
 * BIMRI_SHARE_GIT_SEEDS=1,2,3 runs one test per seed (default: the CI seed
 * below); BIMRI_SHARE_GIT_STEPS sets the number of random moves (default 14) and
 * BIMRI_SHARE_GIT_CLONES the number of clones (3 to 5, default 3).
 */
import { join } from "node:path";
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { bimri, must, startRun } from "../helpers/cli.ts";
import {
  cloneAs,
  entryOf,
  exportNow,
  git,
  gitInit,
  gitOk,
  mulberry32,
  openConflicts,
  originAndClone,
  pullTrusting,
} from "../helpers/share.ts";

const KEYS = ["k.alpha", "k.beta", "k.gamma", "k.delta"];

/** One agent session: sets (or closes) one key. */
async function session(clone: string, key: string, text: string, close: boolean): Promise<void> {
  const run = await startRun(clone, "codex");
  const live = (await bimri(clone, ["get", "--key", key])).code === 0;
  const args = ["propose", "--run", run, "--key", key];
  if (close && live) args.push("--operation", "close");
  else {
    args.push("--text", text);
    if (!live) args.push("--tier", "2", "--new-subject");
  }
  await must(clone, args);
  await must(clone, ["close", "--run", run, "--outcome", "success"]);
}

/** Commits the clone's records as the pre-commit hook does: exported first (`share status`), then staged. */
async function commitRecords(clone: string, message: string): Promise<void> {
  await exportNow(clone);
  await gitOk(clone, ["add", "-A", ".bimri-share"]);
  const status = await gitOk(clone, ["status", "--porcelain", "--", ".bimri-share"]);
  if (status.trim() !== "") await gitOk(clone, ["commit", "-q", "-m", message]);
}

async function pullGit(clone: string, rebase: boolean): Promise<void> {
  await gitOk(clone, [
    "pull",
    "-q",
    rebase ? "--rebase" : "--no-rebase",
    "--no-edit",
    "origin",
    "main",
  ]);
}

async function pushGit(clone: string, rebase: boolean): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const pushed = await git(clone, ["push", "-q", "origin", "HEAD:main"]);
    if (pushed.code === 0) return;
    await pullGit(clone, rebase);
  }
  throw new Error(`push from ${clone} kept failing`);
}

async function runSeed(seed: number, steps: number): Promise<void> {
  const rand = mulberry32(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)];
  const { base, origin, first: a } = await originAndClone();
  await session(a, "k.alpha", "Alpha seed.", false);
  await gitInit(a); // share init needs a git work tree
  await must(a, ["share", "init", "--yes"]);
  await gitOk(a, ["add", ".gitignore", ".bimri-share"]);
  await gitOk(a, ["commit", "-q", "-m", "share memory"]);
  await gitOk(a, ["push", "-q", "origin", "HEAD:main"]);
  const c = join(base, "c");
  await gitOk(base, ["clone", "-q", "-c", "core.autocrlf=true", origin, c]);
  const clones = [a, c];
  for (const name of ["b", "d", "e"].slice(0, CLONES - 2)) {
    clones.push(await cloneAs(base, origin, name));
  }
  // Every owner trusts every teammate's replica (pullTrusting answers each question).
  for (const clone of clones.slice(1)) await pullTrusting(clone);
  const log: string[] = [];
  let n = 0;
  for (let step = 0; step < steps; step++) {
    const i = Math.floor(rand() * clones.length);
    const clone = clones[i];
    const op = pick(
      [
        "session",
        "session",
        "session",
        "publish",
        "publish",
        "sync",
        "stash",
        "clean",
        "branch",
      ] as const,
    );
    const rebase = rand() < 0.5;
    log.push(
      `${i}:${op}${op === "publish" || op === "sync" ? (rebase ? "/rebase" : "/merge") : ""}`,
    );
    n++;
    const key = pick(KEYS);
    const text = `Text ${n} from clone ${i}.`;
    switch (op) {
      case "session":
        await session(clone, key, text, rand() < 0.15);
        break;
      case "publish":
        await commitRecords(clone, `memory ${n}`);
        await pullGit(clone, rebase);
        await pushGit(clone, rebase);
        break;
      case "sync":
        await commitRecords(clone, `memory ${n}`);
        await pullGit(clone, rebase);
        await pullTrusting(clone);
        break;
      case "stash":
        // Work lost before it was committed: stash -u, then drop.
        await session(clone, key, text, false);
        await gitOk(clone, ["stash", "-u", "-q"]);
        await git(clone, ["stash", "drop", "-q"]);
        break;
      case "clean":
        await session(clone, key, text, false);
        await gitOk(clone, ["clean", "-fdq"]);
        break;
      case "branch": {
        // Work committed on a branch that is abandoned.
        await commitRecords(clone, `memory ${n}`);
        await gitOk(clone, ["checkout", "-q", "-b", `side-${n}`]);
        await session(clone, key, text, false);
        await commitRecords(clone, `side ${n}`);
        await gitOk(clone, ["checkout", "-q", "main"]);
        break;
      }
    }
  }
  // Everyone publishes and pulls; the owner answers what is open (a question
  // from another clone closes everywhere once answered; a clone's own local
  // question is answered there), until a round changes nothing.
  for (let round = 0; round < 6; round++) {
    for (const clone of clones) {
      await commitRecords(clone, `final ${round}`);
      await pullGit(clone, false);
      await pushGit(clone, false);
    }
    for (const clone of clones) {
      await pullGit(clone, false);
      await pullTrusting(clone);
    }
    let answered = 0;
    for (const clone of clones) {
      for (const id of await openConflicts(clone)) {
        await must(clone, ["resolve", id, "--choose", "current", "--human-approved"]);
        answered++;
      }
      if (answered > 0) break;
    }
    const status = await Promise.all(
      clones.map(async (clone) => (await gitOk(clone, ["status", "--porcelain"])).trim()),
    );
    if (answered === 0 && status.every((s) => s === "")) break;
  }
  const context = `seed ${seed}: ${log.join(" ")}`;
  for (const clone of clones) deepStrictEqual(await openConflicts(clone), [], context);
  for (const key of KEYS) {
    const entries = await Promise.all(clones.map((clone) => entryOf(clone, key)));
    for (const entry of entries) deepStrictEqual(entry, entries[0], `${key}; ${context}`);
  }
  for (const clone of clones) {
    const status = JSON.parse(await must(clone, ["share", "status", "--json"]));
    strictEqual(status.waiting, 0, context);
    deepStrictEqual(status.gaps, [], context);
    const doctor = await bimri(clone, ["doctor", "--read-only"]);
    strictEqual(doctor.code, 0, `${doctor.stdout}${doctor.stderr}; ${context}`);
  }
  ok(log.length === steps);
}

const seeds = (Deno.env.get("BIMRI_SHARE_GIT_SEEDS") ?? "20261206").split(",")
  .map((s) => Number(s.trim())).filter((s) => Number.isInteger(s));
const steps = Number(Deno.env.get("BIMRI_SHARE_GIT_STEPS") ?? "14");
const CLONES = Math.min(5, Math.max(3, Number(Deno.env.get("BIMRI_SHARE_GIT_CLONES") ?? "3")));

for (const seed of seeds) {
  Deno.test(`team memory through real git converges (seed ${seed}, ${CLONES} clones, ${steps} random moves)`, async () => {
    await runSeed(seed, steps);
  });
}
