/**
 * Opt-in git hooks for team memory (`bimri share hooks install|uninstall|status`):
 * post-merge, post-checkout and post-rewrite run `bimri share pull`;
 * pre-commit lets bimri restore its own records, then stages `.bimri-share/`.
 * An existing hook is kept beside ours (`<hook>.bimri-chained`) and still
 * runs first, with its own exit status; bimri itself never blocks or fails a
 * git command (a failure prints one line). Uninstall puts everything back.
 */
import { join } from "../store/os_path.ts";
import { BimriError } from "../errors.ts";
import { atomicReplace, lstatOrNull, readTextOrNull } from "../store/files.ts";
import { SHARE_FOLDER } from "./state.ts";

/** The hooks bimri installs. */
export const HOOK_NAMES = ["post-merge", "post-checkout", "post-rewrite", "pre-commit"] as const;

/** The marker line that identifies a bimri hook. */
export const HOOK_MARKER = "# bimri share hook";

/** The suffix an existing hook is kept under while bimri's hook chains it. */
export const CHAINED_SUFFIX = ".bimri-chained";

/** One hook's state. */
export type HookState = {
  name: string;
  /** bimri's hook is installed. */
  installed: boolean;
  /** An earlier hook is kept and chained. */
  chained: boolean;
  /** A hook that is not bimri's occupies the name (install would chain it). */
  foreign: boolean;
};

/** POSIX single-quoting of one argument. */
function quote(arg: string): string {
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

/**
 * The text of hook `name` running bimri as `argv` (the runtime prefix) on the
 * store at `rel` (relative to the working tree's top level, "" for the top).
 */
export function hookScript(name: string, argv: string[], rel: string): string {
  const bimri = argv.map(quote).join(" ");
  const root = rel === "" ? `"$top"` : `"$top"/${quote(rel)}`;
  const work = name === "pre-commit"
    ? [
      `  ${bimri} --root ${root} share status >/dev/null 2>"$log" &&`,
      `    git add -A -- ${root}/${SHARE_FOLDER} 2>>"$log"`,
    ]
    : [`  ${bimri} --root ${root} share pull >/dev/null 2>"$log"`];
  const what = name === "pre-commit" ? "staging .bimri-share/" : "share pull";
  return [
    "#!/bin/sh",
    `${HOOK_MARKER} (${name}): bimri share hooks uninstall removes it and puts back any hook it chains.`,
    'chained="$0.bimri-chained"',
    "status=0",
    'if [ -x "$chained" ]; then "$chained" "$@" || status=$?; fi',
    'top="$(git rev-parse --show-toplevel 2>/dev/null)" || top="."',
    // A fresh file (never a name another local user could plant a link at); without mktemp, no log.
    'log="$(mktemp "${TMPDIR:-/tmp}/bimri-hook.XXXXXX" 2>/dev/null)" || log=/dev/null',
    "if (",
    ...work,
    ") </dev/null; then :; else",
    `  echo "bimri: ${what} failed in the git ${name} hook ($(head -n 1 "$log" 2>/dev/null)); run \\\`bimri share status\\\` to see why (git was not affected)." >&2`,
    "fi",
    '[ "$log" = /dev/null ] || rm -f "$log"',
    'exit "$status"',
    "",
  ].join("\n");
}

/** The folder git runs hooks from (core.hooksPath respected), for the repository at `root`. */
export function gitHooksFolder(root: string): { hooks: string; top: string } {
  const run = (args: string[]) => {
    let out;
    try {
      out = new Deno.Command("git", { args, cwd: root, stdout: "piped", stderr: "piped" })
        .outputSync();
    } catch {
      throw new BimriError("refused", "git is not available; install git to use share hooks.");
    }
    if (!out.success) {
      throw new BimriError(
        "refused",
        `${root} is not inside a git working tree; share hooks need one (git init or git clone first).`,
      );
    }
    return new TextDecoder().decode(out.stdout).trim();
  };
  const top = run(["rev-parse", "--show-toplevel"]);
  const hooks = run(["rev-parse", "--path-format=absolute", "--git-path", "hooks"]);
  return { hooks, top };
}

function isOurs(path: string): boolean {
  return (readTextOrNull(path) ?? "").includes(HOOK_MARKER);
}

/** The state of every bimri hook in `folder`. */
export function hookStates(folder: string): HookState[] {
  return HOOK_NAMES.map((name) => {
    const path = join(folder, name);
    const exists = lstatOrNull(path) !== null;
    const installed = exists && isOurs(path);
    return {
      name,
      installed,
      chained: lstatOrNull(path + CHAINED_SUFFIX) !== null,
      foreign: exists && !installed,
    };
  });
}

/** Installs (or refreshes) every bimri hook in `folder`, keeping existing hooks chained. */
export function installHooks(folder: string, argv: string[], rel: string): HookState[] {
  Deno.mkdirSync(folder, { recursive: true });
  for (const name of HOOK_NAMES) {
    const path = join(folder, name);
    if (lstatOrNull(path) !== null && !isOurs(path)) {
      if (lstatOrNull(path + CHAINED_SUFFIX) !== null) {
        throw new BimriError(
          "refused",
          `${path}${CHAINED_SUFFIX} already exists beside a hook that is not bimri's; move one of them, then run \`bimri share hooks install\` again.`,
        );
      }
      Deno.renameSync(path, path + CHAINED_SUFFIX);
    }
    atomicReplace(path, hookScript(name, argv, rel));
    if (Deno.build.os !== "windows") Deno.chmodSync(path, 0o755);
  }
  return hookStates(folder);
}

/** Removes bimri's hooks from `folder` and puts chained hooks back. */
export function uninstallHooks(folder: string): HookState[] {
  for (const name of HOOK_NAMES) {
    const path = join(folder, name);
    if (lstatOrNull(path) === null || !isOurs(path)) continue;
    Deno.removeSync(path);
    if (lstatOrNull(path + CHAINED_SUFFIX) !== null) Deno.renameSync(path + CHAINED_SUFFIX, path);
  }
  return hookStates(folder);
}
