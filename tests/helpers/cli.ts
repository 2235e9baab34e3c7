/**
 * Black-box test helpers: run the real CLI as a separate process in a fresh
 * temporary store. BIMRI_CMD may name another command prefix (a compiled
 * binary, a bundle) for the whole suite.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";
import { assertEquals, assertMatch } from "./assert.ts";
import { RUN_V8_FLAGS } from "../../engine/install/v8_flags.ts";
import { copyTree, LOCK_FILE_NAME } from "./portable.ts";

/** Absolute path of the repository's main.ts. */
export const MAIN_TS = fileURLToPath(new URL("../../main.ts", import.meta.url));

/** The permission flags the compiled binary gets (keep in sync with deno.json compile tasks). */
export const RUN_PERMISSIONS = ["--allow-read", "--allow-write", "--allow-env", "--allow-run"];

/** The command prefix under test. */
export function commandPrefix(): string[] {
  const custom = Deno.env.get("BIMRI_CMD");
  if (custom) return custom.split(" ").filter((s) => s !== "");
  return [Deno.execPath(), "run", "--quiet", ...RUN_V8_FLAGS, ...RUN_PERMISSIONS, MAIN_TS];
}

/** Result of one CLI invocation. */
export type CliResult = { code: number; stdout: string; stderr: string };

/** Options for one invocation. */
export type CliOptions = {
  stdin?: string | Uint8Array;
  env?: Record<string, string>;
  cwd?: string;
  noRoot?: boolean;
  /** Kills the command when aborted: a test of a wait that may never end fails instead of hanging. */
  signal?: AbortSignal;
};

/** Runs `bimri --root <root> ...args` and captures everything. */
export async function bimri(
  root: string,
  args: string[],
  options: CliOptions = {},
): Promise<CliResult> {
  const [cmd, ...prefix] = commandPrefix();
  const full = options.noRoot ? [...prefix, ...args] : [...prefix, "--root", root, ...args];
  const child = new Deno.Command(cmd, {
    args: full,
    cwd: options.cwd ?? root,
    env: { TZ: "UTC", ...(options.env ?? {}) },
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    signal: options.signal,
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(
      typeof options.stdin === "string" ? new TextEncoder().encode(options.stdin) : options.stdin,
    );
    await writer.close();
  }
  const out = await child.output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** Folders this test process created, removed when it exits. */
const createdFolders: string[] = [];

globalThis.addEventListener("unload", () => {
  // BIMRI_KEEP_TEST_STORES=1 keeps them for a look after a failure.
  if (Deno.env.get("BIMRI_KEEP_TEST_STORES") === "1") return;
  for (const folder of createdFolders) {
    try {
      Deno.removeSync(folder, { recursive: true });
    } catch {
      // Already gone, or held open on Windows: the OS temp cleaner takes it.
    }
  }
});

/** Creates a fresh temporary project folder, removed when the test process exits. */
export async function tempStore(prefix = "bimri-test-"): Promise<string> {
  const folder = await Deno.makeTempDir({ prefix });
  createdFolders.push(folder);
  return folder;
}

/** `tempStore` for synchronous tests. */
export function tempStoreSync(prefix = "bimri-test-"): string {
  const folder = Deno.makeTempDirSync({ prefix });
  createdFolders.push(folder);
  return folder;
}

/** Runs start and returns the run handle. */
export async function startRun(
  root: string,
  actor = "codex",
  extra: string[] = [],
): Promise<string> {
  const result = await bimri(root, ["start", "--actor", actor, ...extra]);
  const match = /^=== BIMRI BRIEF (R\d{6}) \|/m.exec(result.stdout);
  if (result.code !== 0 || !match) {
    throw new Error(`start failed: ${result.stderr}${result.stdout}`);
  }
  return match[1];
}

/** The argv of a Tier 2 `propose` of `key` with `text`, then any `extra` flags. */
export function proposeTier2(
  run: string,
  key: string,
  text: string,
  extra: readonly string[] = [],
): string[] {
  return ["propose", "--run", run, "--tier", "2", "--key", key, "--text", text, ...extra];
}

/** The argv of a Tier 2 `propose --new-subject` of `key` with `text`, then any `extra` flags. */
export function newSubject(run: string, key: string, text: string, extra: string[] = []): string[] {
  return proposeTier2(run, key, text, ["--new-subject", ...extra]);
}

/**
 * SHA-256 of every file under `root` (path -> hash), symlinks as their target
 * text. A `.bimri/engine.lock` file is recorded as present but never read: on
 * Windows its OS lock is mandatory and another process may hold it.
 */
export function hashTree(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string, rel: string) => {
    const entries = [...Deno.readDirSync(dir)].sort((a, b) => a.name < b.name ? -1 : 1);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      const key = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isSymlink) out.set(key, `link:${Deno.readLinkSync(path)}`);
      else if (entry.isFile && key === `.bimri/${LOCK_FILE_NAME}`) out.set(key, "lock");
      else if (entry.isDirectory) {
        out.set(key + "/", "dir");
        walk(path, key);
      } else out.set(key, createHash("sha256").update(Deno.readFileSync(path)).digest("hex"));
    }
  };
  walk(root, "");
  return out;
}

/** Asserts two tree hashes are identical, naming the first difference. */
export function diffTrees(before: Map<string, string>, after: Map<string, string>): string | null {
  for (const [k, v] of before) if (after.get(k) !== v) return `changed or removed: ${k}`;
  for (const k of after.keys()) if (!before.has(k)) return `added: ${k}`;
  return null;
}

/** A byte-exact copy of the folder `root` in a new temp folder: new inodes, same content and times. */
export async function copyStore(root: string): Promise<string> {
  const copy = await tempStore("bimri-copy-");
  copyTree(root, copy);
  return copy;
}

/** Runs `bimri --root <root> ...args`, which must exit 0, and returns its stdout. */
export async function must(
  root: string,
  args: string[],
  options: CliOptions = {},
): Promise<string> {
  const result = await bimri(root, args, options);
  if (result.code !== 0) {
    throw new Error(`${args.join(" ")} failed (${result.code}): ${result.stderr}${result.stdout}`);
  }
  return result.stdout;
}

/** Runs a command that must be refused (exit 2, stderr matching `message`) and change no file under `root`. */
export async function expectRefused(root: string, args: string[], message: RegExp): Promise<void> {
  const before = hashTree(root);
  const result = await bimri(root, args);
  assertEquals(result.code, 2, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
  assertMatch(result.stderr, message, args.join(" "));
  assertEquals(diffTrees(before, hashTree(root)), null, `${args.join(" ")} wrote`);
}

/** Returns `result` when the command exited 0; otherwise fails the test naming `what`. */
export function expectOk(result: CliResult, what: string): CliResult {
  if (result.code !== 0) throw new Error(`${what} failed (${result.code}): ${result.stderr}`);
  return result;
}

/** Parses the JSON file at `.bimri/<rel>` of the store at `root`. */
export function readStoreJson(root: string, rel: string): Record<string, unknown> {
  return JSON.parse(Deno.readTextFileSync(join(root, ".bimri", rel)));
}

/** True when `path` exists (a link counts as itself, never followed). */
export function pathExists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
