/**
 * A real `bimri` command (issue 45): whether one is on PATH, and the one line
 * that puts it there for the form bimri runs in now (the same permissions and
 * V8 flags as the runtime binding), printed by install when PATH has none.
 */
import { nativePath } from "../store/os_path.ts";
import { RUN_PERMISSIONS } from "./permissions.ts";
import { RUN_V8_FLAGS } from "./v8_flags.ts";
import { LAZY_IMPORTS_FLAG } from "./runtime.ts";

/** Whether a `bimri` executable is in one of the PATH folders. */
export function bimriOnPath(
  path: string | undefined,
  windows: boolean = Deno.build.os === "windows",
): boolean {
  if (!path) return false;
  const names = windows ? ["bimri.exe", "bimri.cmd", "bimri.bat", "bimri"] : ["bimri"];
  for (const dir of path.split(windows ? ";" : ":")) {
    if (dir === "") continue;
    for (const name of names) {
      try {
        const info = Deno.statSync(nativePath.join(dir, name));
        if (info.isFile && (windows || ((info.mode ?? 0o111) & 0o111) !== 0)) return true;
      } catch { /* not there */ }
    }
  }
  return false;
}

function quote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

/**
 * The `deno install -g` line for a main module (a checkout's main.ts or a
 * URL) with its config flag: the binding's permissions and V8 flags exactly.
 */
export function denoInstallLine(module: string, config: readonly string[]): string {
  return [
    "deno",
    "install",
    "-g",
    "-f",
    "-n",
    "bimri",
    "--quiet",
    ...config,
    ...RUN_V8_FLAGS,
    ...RUN_PERMISSIONS,
    module,
  ].map(quote).join(" ");
}

/**
 * The one line that puts a `bimri` command on PATH for the runtime whose
 * argv prefix is `argv` (compiled executable, or `deno run ... <module>`).
 */
export function pathHintLine(argv: readonly string[]): string {
  if (argv.length === 1) {
    return `mkdir -p ~/.local/bin && ln -sf ${quote(argv[0])} ~/.local/bin/bimri`;
  }
  const module = argv[argv.length - 1];
  const at = argv.indexOf("--config");
  const config = at >= 0 ? ["--config", argv[at + 1]] : ["--no-config", LAZY_IMPORTS_FLAG];
  return denoInstallLine(module, config);
}

/** install's stderr lines when PATH has no `bimri` (empty when it has one). */
export function pathHintNotice(argv: readonly string[], path: string | undefined): string[] {
  if (bimriOnPath(path)) return [];
  return [
    "BIMRI: there is no `bimri` command on PATH (agents and hooks use the recorded binding, so memory works without one). To type `bimri ...` yourself, run once:",
    `  ${pathHintLine(argv)}`,
    "then make sure its folder (~/.local/bin, or ~/.deno/bin for deno install) is on PATH and check with: bimri --version",
  ];
}
