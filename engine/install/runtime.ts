/**
 * The runtime binding: which argument list runs this very bimri (the
 * compiled executable, or Deno with `run`, the permission flags and the main
 * module), proven by running it with a private sentinel before the installer
 * changes anything, and recorded in `.bimri/runtime.local.json`.
 */
import { basename, dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BimriError } from "../errors.ts";
import {
  AUTHORITY_FORMAT,
  BIMRI_RELEASE,
  ENGINE_COMPAT_RELEASE,
  HOT_GRAMMAR,
} from "../versions.ts";
import { lstatOrNull } from "../store/files.ts";
import type { JsonObject } from "../model/json.ts";
import { RUN_PERMISSIONS } from "./permissions.ts";
import { RUN_V8_FLAGS } from "./v8_flags.ts";

/** The hidden verb a prefix must answer to prove it runs this bimri. */
export const SENTINEL_VERB = "__bimri-sentinel";
/** How long the sentinel may take (a cold `deno run` of a URL may fetch modules). */
export const SENTINEL_TIMEOUT_MS = 60_000;

/**
 * Loads a dynamically imported module only when the import runs. bimri's
 * deno.json turns this on for a checkout; a URL run has no deno.json, so its
 * binding passes the flag itself. Without it Deno builds every verb's module
 * graph before any verb runs: about 16 ms more on each command, `--version`
 * included (measured 32.7 against 15.3 ms p50).
 */
export const LAZY_IMPORTS_FLAG = "--unstable-lazy-dynamic-imports";

/** How this process runs. */
export type RuntimeKind = "compiled" | "deno-run";

/** A candidate argv prefix and how it was derived. */
export type RuntimePrefix = { kind: RuntimeKind; argv: string[] };

/** The versions a sentinel reports. */
export type RuntimeVersions = {
  bimri_release: string;
  compatible_engine: string;
  memory_format: string;
  hot_grammar: string;
};

/** This build's versions, as the sentinel prints them. */
export function ownVersions(): RuntimeVersions {
  return {
    bimri_release: BIMRI_RELEASE,
    compatible_engine: ENGINE_COMPAT_RELEASE,
    memory_format: AUTHORITY_FORMAT,
    hot_grammar: HOT_GRAMMAR,
  };
}

/** The sentinel's exact answer for `nonce` (one JSON line). */
export function sentinelAnswer(nonce: string): string {
  const versions = ownVersions();
  return JSON.stringify({
    bimri_release: versions.bimri_release,
    compatible_engine: versions.compatible_engine,
    hot_grammar: versions.hot_grammar,
    memory_format: versions.memory_format,
    sentinel: nonce,
  }) + "\n";
}

function isDenoExecutable(path: string): boolean {
  return /^deno(\.exe)?$/i.test(basename(path));
}

/**
 * The argv prefix that runs this process again: the executable itself when
 * compiled, else `deno run --quiet <V8 flags> <config> <permissions> <main module>`.
 * The config flag pins bimri's own deno.json (or none, with the lazy-import
 * flag that deno.json would have set) so a deno.json in the target project
 * can never change how bimri resolves its modules.
 */
export function currentRuntimePrefix(
  execPath: string = Deno.execPath(),
  mainModule: string = Deno.mainModule,
): RuntimePrefix {
  const compiled = mainModule.includes("/deno-compile-") ||
    mainModule.includes("\\deno-compile-") || !isDenoExecutable(execPath);
  if (compiled) return { kind: "compiled", argv: [execPath] };
  let module = mainModule;
  let config = ["--no-config", LAZY_IMPORTS_FLAG];
  if (mainModule.startsWith("file:")) {
    module = fileURLToPath(mainModule);
    const beside = join(dirname(module), "deno.json");
    if (lstatOrNull(beside)?.isFile) config = ["--config", beside];
  }
  return {
    kind: "deno-run",
    argv: [execPath, "run", "--quiet", ...RUN_V8_FLAGS, ...config, ...RUN_PERMISSIONS, module],
  };
}

function randomNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function refuse(detail: string): never {
  throw new BimriError(
    "refused",
    `the runtime check failed: ${detail} Nothing in the target was changed. Run install with a working bimri (the compiled executable, or deno run with ${
      RUN_PERMISSIONS.join(" ")
    }).`,
  );
}

/**
 * Runs `prefix` with a fresh sentinel under a timeout and requires the exact
 * answer; throws a BimriError (nothing written) otherwise.
 */
export async function verifyRuntimePrefix(
  prefix: RuntimePrefix,
  cwd: string,
  timeoutMs: number = SENTINEL_TIMEOUT_MS,
): Promise<void> {
  const [command, ...args] = prefix.argv;
  if (!command || !isAbsolute(command)) refuse("the executable path is not absolute.");
  const info = lstatOrNull(command);
  if (!info) refuse(`the executable ${command} does not exist.`);
  const nonce = randomNonce();
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(command, {
      args: [...args, SENTINEL_VERB, nonce],
      cwd,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(timeoutMs),
    }).output();
  } catch (error) {
    refuse(`running ${command} failed (${(error as Error).message}).`);
  }
  if (output.signal !== null) refuse(`the check did not finish within ${timeoutMs / 1000} s.`);
  const stdout = new TextDecoder().decode(output.stdout);
  if (output.code !== 0) {
    const detail = (new TextDecoder().decode(output.stderr).trim() || stdout.trim() || "no output")
      .slice(0, 500);
    refuse(`the check exited with ${output.code}: ${detail}.`);
  }
  if (stdout === "") refuse("the check printed nothing, which counts as a failure.");
  if (stdout !== sentinelAnswer(nonce)) {
    refuse(
      `the check answered ${JSON.stringify(stdout.slice(0, 300))}, not the expected sentinel.`,
    );
  }
}

/**
 * The `.bimri/runtime.local.json` document (canonical JSON; host-bound, never
 * authority). `enginePath` is the project's `bimri-engine.py` launcher, named
 * `engine_path` as in the reference's binding so scripts that run
 * `<python> <engine_path> ...` still reach bimri.
 */
export function runtimeBinding(
  prefix: RuntimePrefix,
  verifiedAt: string,
  enginePath: string,
): JsonObject {
  const versions = ownVersions();
  return {
    argv_prefix: [...prefix.argv],
    engine_path: enginePath,
    host_bound: true,
    runtime: prefix.kind,
    executable: prefix.argv[0],
    verified_at: verifiedAt,
    version: versions.compatible_engine,
    versions: { ...versions },
  };
}
