/** Helpers for the team-memory tests: real git clones and shared stores driven through the CLI. */
import { join } from "node:path";
import { bimri, must, startRun, tempStore } from "./cli.ts";

/** Result of one git invocation. */
export type GitResult = { code: number; out: string };

/** Runs git in `cwd` with a fixed identity and no user configuration. */
export async function git(cwd: string, args: string[]): Promise<GitResult> {
  const out = await new Deno.Command("git", {
    args: [
      "-c",
      "user.name=bimri-test",
      "-c",
      "user.email=test@bimri.invalid",
      "-c",
      "init.defaultBranch=main",
      "-c",
      "pull.rebase=false",
      "-c",
      "commit.gpgsign=false",
      ...args,
    ],
    cwd,
    env: { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", GIT_TERMINAL_PROMPT: "0" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: out.code, out: d.decode(out.stdout) + d.decode(out.stderr) };
}

/** Runs git and fails on a non-zero exit or any merge conflict. */
export async function gitOk(cwd: string, args: string[]): Promise<string> {
  const r = await git(cwd, args);
  if (r.code !== 0 || /CONFLICT/.test(r.out)) {
    throw new Error(`git ${args.join(" ")} in ${cwd} failed (${r.code}):\n${r.out}`);
  }
  return r.out;
}

/** Makes `root` a git work tree (`share init` refuses outside one). */
export async function gitInit(root: string): Promise<void> {
  await gitOk(root, ["init", "-q"]);
}

/** A bare origin and a first clone. */
export async function originAndClone(): Promise<{ base: string; origin: string; first: string }> {
  const base = await tempStore("bimri-share-");
  const origin = join(base, "origin.git");
  await gitOk(base, ["init", "--bare", "-q", origin]);
  const first = join(base, "a");
  await gitOk(base, ["clone", "-q", origin, first]);
  Deno.writeTextFileSync(join(first, "README.md"), "project\n");
  await gitOk(first, ["add", "README.md"]);
  await gitOk(first, ["commit", "-q", "-m", "initial"]);
  await gitOk(first, ["push", "-q", "-u", "origin", "HEAD"]);
  return { base, origin, first };
}

/** Clones `origin` into `<base>/<name>`. */
export async function cloneAs(base: string, origin: string, name: string): Promise<string> {
  const dir = join(base, name);
  await gitOk(base, ["clone", "-q", origin, dir]);
  return dir;
}

/**
 * Exports this clone's pending changes as the pre-commit hook does (`share
 * status`), commits whatever changed in `.bimri-share/` (and .gitignore),
 * pulls (merge) and pushes.
 */
export async function publish(clone: string, message: string): Promise<void> {
  await exportNow(clone);
  await gitOk(clone, ["add", "-A", ".bimri-share"]);
  try {
    Deno.lstatSync(join(clone, ".gitignore"));
    await gitOk(clone, ["add", ".gitignore"]);
  } catch { /* none */ }
  const status = await gitOk(clone, ["status", "--porcelain"]);
  if (status.trim() !== "") await gitOk(clone, ["commit", "-q", "-m", message]);
  await gitOk(clone, ["pull", "-q", "--no-edit", "origin", "main"]);
  await gitOk(clone, ["push", "-q", "origin", "HEAD:main"]);
}

/**
 * Writes the records of the changes `clone`'s everyday commands left for the
 * next export, as the pre-commit hook does (`bimri share status`).
 */
export async function exportNow(clone: string): Promise<void> {
  await must(clone, ["share", "status"]);
}

/** `git pull` then `bimri share pull` (the owner trusting new replicas); returns the pull's stdout. */
export async function fetchMemory(clone: string): Promise<string> {
  await gitOk(clone, ["pull", "-q", "--no-edit", "origin", "main"]);
  return await pullTrusting(clone);
}

/**
 * `bimri share pull`; when it asks the owner to trust replicas, the owner
 * trusts each (`share trust --human-approved`) and pulls again. Returns the
 * last pull's stdout.
 */
export async function pullTrusting(clone: string): Promise<string> {
  const first = await must(clone, ["share", "pull"]);
  const asked = [...first.matchAll(/^BIMRI OWNER QUESTION: trust replica ([a-z2-7]{26}),/gm)];
  if (asked.length === 0) return first;
  for (const [, replica] of asked) {
    await must(clone, ["share", "trust", replica, "--human-approved"]);
  }
  return await must(clone, ["share", "pull"]);
}

/** An agent's session: start, propose `sets` (key -> text; new subjects when absent), close. */
export async function agentSets(
  clone: string,
  actor: string,
  sets: Record<string, string>,
): Promise<void> {
  const run = await startRun(clone, actor);
  for (const [key, text] of Object.entries(sets)) {
    const got = await bimri(clone, ["get", "--key", key]);
    const args = ["propose", "--run", run, "--key", key, "--text", text];
    if (got.code !== 0) args.push("--tier", "2", "--new-subject");
    await must(clone, args);
  }
  await must(clone, ["close", "--run", run, "--outcome", "success"]);
}

/** The text `get --key` answers (7th TSV column), or null when the key is absent. */
export async function textOf(clone: string, key: string): Promise<string | null> {
  const r = await bimri(clone, ["get", "--key", key]);
  if (r.code !== 0) return null;
  return r.stdout.trimEnd().split("\t")[6] ?? null;
}

/** IDs of the conflicts `review` lists as actionable concurrent conflicts. */
export async function openConflicts(clone: string): Promise<string[]> {
  const out = await must(clone, ["review", "--limit", "50"]);
  return [...out.matchAll(/^MEMORY CONFLICT (C[0-9]{6})/gm)].map((m) => m[1]);
}

/** The owner trusts every replica that publishes a key in `clone`'s `.bimri-share/`. */
export async function trustEveryReplica(clone: string): Promise<void> {
  const share = join(clone, ".bimri-share");
  for (const entry of Deno.readDirSync(share)) {
    if (!entry.isDirectory) continue;
    try {
      Deno.lstatSync(join(share, entry.name, "key.json"));
    } catch {
      continue;
    }
    const r = await bimri(clone, ["share", "trust", entry.name, "--human-approved"]);
    if (r.code !== 0 && !/this clone's own/.test(r.stderr)) {
      throw new Error(`share trust ${entry.name} failed: ${r.stderr}`);
    }
  }
}

/** Copies `<from>/.bimri-share` into `<to>` (a stand-in for a git pull without git). */
export function copyShare(from: string, to: string): void {
  const copy = (src: string, dst: string) => {
    Deno.mkdirSync(dst, { recursive: true });
    for (const entry of Deno.readDirSync(src)) {
      if (entry.isDirectory) copy(join(src, entry.name), join(dst, entry.name));
      else Deno.copyFileSync(join(src, entry.name), join(dst, entry.name));
    }
  };
  copy(join(from, ".bimri-share"), join(to, ".bimri-share"));
}

/**
 * A shared memory across git clones: a bare origin, clone `a` with `seeds`
 * (key -> text) shared and published, and clones `names` that pulled it
 * (their owners trusting `a`'s replica).
 */
export async function sharedClones(
  seeds: Record<string, string>,
  names: string[] = ["b"],
): Promise<{ base: string; origin: string; clones: string[] }> {
  const { base, origin, first } = await originAndClone();
  await agentSets(first, "codex", seeds);
  await gitInit(first); // share init needs a git work tree
  await must(first, ["share", "init", "--yes"]);
  await publish(first, "share memory");
  const clones = [first];
  for (const name of names) {
    const clone = await cloneAs(base, origin, name);
    await pullTrusting(clone); // the owner trusts the first clone's replica

    clones.push(clone);
  }
  return { base, origin, clones };
}

/** The whole entry `get --json` shows for `key`, without local IDs and residency (null: absent). */
export async function entryOf(clone: string, key: string): Promise<Record<string, unknown> | null> {
  const r = await bimri(clone, ["--json", "get", "--key", key]);
  if (r.code !== 0) return null;
  const match = JSON.parse(r.stdout).matches[0] ?? null;
  if (match === null) return null;
  for (const local of ["id", "first_run", "last_run", "pointer", "location", "reason"]) {
    delete match[local];
  }
  return match;
}

/** A small seeded pseudo-random generator (mulberry32) for property tests. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A shared store (git work tree, `share init`) seeded with `sets` (one seed
 * record per key); returns its replica and that replica's record folder.
 */
export async function sharedStore(
  prefix?: string,
  sets: Record<string, string> = { "good.one": "Good one." },
): Promise<{ root: string; replica: string; own: string }> {
  const root = await tempStore(prefix);
  await agentSets(root, "codex", sets);
  await gitInit(root); // share init needs a git work tree
  await must(root, ["share", "init", "--yes"]);
  const replica = [...Deno.readDirSync(join(root, ".bimri-share"))].find((e) => e.isDirectory)!
    .name;
  return { root, replica, own: join(root, ".bimri-share", replica) };
}

/** A minute at most per command: a read that never ends fails the test instead of hanging it. */
export function bounded(): { signal: AbortSignal } {
  return { signal: AbortSignal.timeout(60_000) };
}
