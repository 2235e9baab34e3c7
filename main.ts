/**
 * bimri: one durable memory shared by every local coding agent in a project.
 * Entry point: global flags, root resolution, dispatch, and the mapping of
 * errors to `BIMRI ERROR:` lines and exit codes. Dispatch loads only the
 * module of the verb it runs (COMMAND_LOADERS), so an everyday command does
 * not pay start-up time for the installer, the MCP server or the integrity
 * tools; `commands/mod.ts` keeps the full registry and a unit test keeps the
 * two in step.
 */
import { BimriError, unexpectedFailure } from "./engine/errors.ts";
import {
  AUTHORITY_FORMAT,
  BIMRI_RELEASE,
  ENGINE_COMPAT_RELEASE,
  HOT_GRAMMAR,
  VERSIONS_EXPLAINED,
} from "./engine/versions.ts";
import { type CommandContext, type CommandResult, parseCommandArgs } from "./commands/command.ts";
import type { Command } from "./commands/command.ts";
import {
  namedRootPresence,
  QUIET_CREATORS,
  resolveFolder,
  resolveRoot,
  ROOT_CREATORS,
  storeCreatedNotice,
  storePresence,
} from "./engine/store/root.ts";
import { visibleOutput } from "./engine/model/visible.ts";
import { pinnedClock, useClock } from "./engine/model/time.ts";
import { takeShareNotices } from "./engine/share/notice.ts";
import { runCommand } from "./commands/run.ts";

/** Loads one verb's module on demand (only the verb being run is ever loaded). */
export type Loader = () => Promise<Command>;

/** Loaders for every verb and alias. */
export const COMMAND_LOADERS: Readonly<Record<string, Loader>> = {
  start: () => import("./commands/start.ts").then((m) => m.startCommand),
  journal: () => import("./commands/journal.ts").then((m) => m.journalCommand),
  propose: () => import("./commands/propose.ts").then((m) => m.proposeCommand),
  sync: () => import("./commands/sync.ts").then((m) => m.syncCommand),
  maintain: () => import("./commands/maintain.ts").then((m) => m.maintainCommand),
  close: () => import("./commands/close.ts").then((m) => m.closeCommand),
  "recover-run": () => import("./commands/close.ts").then((m) => m.recoverRunCommand),
  status: () => import("./commands/status.ts").then((m) => m.statusCommand),
  doctor: () => import("./commands/doctor.ts").then((m) => m.doctorCommand),
  validate: () => import("./commands/doctor.ts").then((m) => m.doctorCommand),
  "quarantine-authority": () => import("./commands/quarantine.ts").then((m) => m.quarantineCommand),
  "restore-authority": () => import("./commands/restore.ts").then((m) => m.restoreCommand),
  review: () => import("./commands/review.ts").then((m) => m.reviewCommand),
  resolve: () => import("./commands/resolve.ts").then((m) => m.resolveCommand),
  share: () => import("./commands/share.ts").then((m) => m.shareCommand),
  secrets: () => import("./commands/secrets.ts").then((m) => m.secretsCommand),
  migrate: () => import("./commands/migrate.ts").then((m) => m.migrateCommand),
  index: () => import("./commands/index.ts").then((m) => m.indexCommand),
  recall: () => import("./commands/recall.ts").then((m) => m.recallCommand),
  get: () => import("./commands/get.ts").then((m) => m.getCommand),
  search: () => import("./commands/search.ts").then((m) => m.searchCommand),
  mcp: () => import("./commands/mcp.ts").then((m) => m.mcpCommand),
  ui: () => import("./commands/ui.ts").then((m) => m.uiCommand),
  "hook-start": () => import("./commands/hooks.ts").then((m) => m.hookStartCommand),
  "hook-close": () => import("./commands/hooks.ts").then((m) => m.hookCloseCommand),
  install: () => import("./commands/install.ts").then((m) => m.installCommand),
  "__bimri-sentinel": () => import("./commands/install.ts").then((m) => m.sentinelCommand),
};

/** Loads the verb named `name` (or an alias), or undefined for an unknown verb. */
export async function loadCommand(name: string): Promise<Command | undefined> {
  const loader = Object.hasOwn(COMMAND_LOADERS, name) ? COMMAND_LOADERS[name] : undefined;
  return loader ? await loader() : undefined;
}

const encoder = new TextEncoder();

/** Where the CLI writes its output (the process streams by default; benchmarks capture it). */
export type CliIo = { stdout: (text: string) => void; stderr: (text: string) => void };

function streamWriter(stream: { writeSync(p: Uint8Array): number }): (text: string) => void {
  return (text: string) => {
    const bytes = encoder.encode(text);
    let offset = 0;
    try {
      while (offset < bytes.length) offset += stream.writeSync(bytes.subarray(offset));
    } catch (error) {
      // A reader that stopped early (`bimri start | head -1`) does not undo
      // what the command did: its exit code stands, as in the reference,
      // rather than an "unexpected failure" about a store that is fine.
      if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
    }
  };
}

/** The process's own stdout and stderr. */
export const PROCESS_IO: CliIo = {
  stdout: streamWriter(Deno.stdout),
  stderr: streamWriter(Deno.stderr),
};

/** The `--version` text. */
export function versionText(): string {
  // The first line stays as it is (scripts read it); the second explains it (issue 45).
  return `bimri ${BIMRI_RELEASE} (compatible engine ${ENGINE_COMPAT_RELEASE}, memory format ${AUTHORITY_FORMAT}, hot grammar ${HOT_GRAMMAR})\n${VERSIONS_EXPLAINED}\n`;
}

/** Default root: BIMRI_ROOT, else nearest ancestor with `.bimri/`, else the working directory. */
export function defaultRoot(cwd: string, env: string | undefined): string {
  return resolveRoot({ cwd, envRoot: env });
}

function readAllStdin(): Uint8Array {
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(65536);
  while (true) {
    let n: number | null;
    try {
      n = Deno.stdin.readSync(buffer);
    } catch {
      break;
    }
    if (n === null || n === 0) break;
    chunks.push(buffer.slice(0, n));
  }
  const total = chunks.reduce((s, c) => s + c.length, 0);
  const all = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    all.set(c, offset);
    offset += c.length;
  }
  return all;
}

type GlobalOptions = {
  root?: string;
  json: boolean;
  rest: string[];
  version: boolean;
  help: boolean;
};

// Before the verb, argparse (allow_abbrev) also takes --r, --ro and --roo for --root.
const ROOT_SPELLINGS: ReadonlySet<string> = new Set(["--r", "--ro", "--roo", "--root"]);

function takeGlobals(argv: string[]): GlobalOptions {
  const out: GlobalOptions = { json: false, rest: [], version: false, help: false };
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--json") out.json = true;
    else if (arg === "--version" || arg === "-V") out.version = true;
    else if (arg === "--help" || arg === "-h") out.help = true;
    else if (ROOT_SPELLINGS.has(arg)) {
      if (i + 1 >= argv.length) throw new BimriError("usage", "--root needs a folder path.");
      out.root = argv[++i];
    } else if (ROOT_SPELLINGS.has(arg.split("=")[0]) && arg.includes("=")) {
      out.root = arg.slice(arg.indexOf("=") + 1);
    } else break;
  }
  out.rest = argv.slice(i);
  return out;
}

function errorResult(error: BimriError): CommandResult {
  return {
    exitCode: error.exitCode,
    text: "",
    stderr: [...error.notices, `BIMRI ERROR: ${error.message}`],
    data: { ok: false, error: { code: error.code, message: error.message } },
  };
}

function emit(result: CommandResult, json: boolean, io: CliIo): number {
  // Untrusted text (memory, share names and fields) never reaches a terminal
  // or an agent with characters that forge lines or hide text: see visible.ts.
  if (json && result.jsonText !== undefined) {
    io.stdout(visibleOutput(result.jsonText));
  } else if (json) {
    const data = "ok" in result.data ? result.data : { ok: result.exitCode === 0, ...result.data };
    io.stdout(visibleOutput(JSON.stringify(data, null, 2)) + "\n");
  } else if (result.text) {
    io.stdout(visibleOutput(result.text));
  }
  for (const line of [...takeShareNotices(), ...result.stderr ?? []]) {
    io.stderr(visibleOutput(line.endsWith("\n") ? line.slice(0, -1) : line) + "\n");
  }
  return result.exitCode;
}

/** BIMRI_NOW, or undefined when it is unset or the environment may not be read. */
function clockPin(): string | undefined {
  try {
    return Deno.env.get("BIMRI_NOW");
  } catch {
    return undefined;
  }
}

/** Runs the CLI with `argv` and returns the exit code. */
export async function runCli(argv: string[], io: CliIo = PROCESS_IO): Promise<number> {
  // The clock comes in from the edge: BIMRI_NOW pins it (tests), else the system clock.
  // Every entry point runs through here: the CLI verbs, hooks, and the MCP and ui servers.
  useClock(pinnedClock(clockPin()));
  let json = argv.includes("--json");
  try {
    const globals = takeGlobals(argv);
    json = globals.json || json;
    if (globals.version && globals.rest.length === 0) {
      io.stdout(versionText());
      return 0;
    }
    if (globals.rest.length === 0 && globals.help) {
      const { COMMANDS, mainHelp } = await import("./commands/mod.ts");
      io.stdout(mainHelp(COMMANDS));
      return 0;
    }
    // Like the reference, a bare `bimri` (global flags only) is `bimri status`.
    const [name, ...args] = globals.rest.length === 0 ? ["status"] : globals.rest;
    const command = await loadCommand(name);
    if (!command) {
      throw new BimriError(
        "usage",
        `unknown command ${JSON.stringify(name)}. Run \`bimri --help\` for the list.`,
      );
    }
    if (globals.help || args.includes("--help") || args.includes("-h")) {
      io.stdout(command.help + "\n");
      return 0;
    }
    const { flags, positionals } = parseCommandArgs(command, args);
    if (flags.help === true) {
      // An abbreviated help switch (`--he`), as argparse accepts it.
      io.stdout(command.help + "\n");
      return 0;
    }
    json = json || flags.json === true;
    const rootFlag = typeof flags.root === "string" ? flags.root : globals.root;
    const cwd = Deno.cwd();
    const envRoot = Deno.env.get("BIMRI_ROOT");
    const root = rootFlag !== undefined ? resolveFolder(cwd, rootFlag) : defaultRoot(cwd, envRoot);
    // No store appears by accident: a mistyped root is refused, a new store is announced.
    const named = rootFlag !== undefined ? "--root" : envRoot ? "BIMRI_ROOT" : null;
    const before = named !== null && !ROOT_CREATORS.has(command.name)
      ? namedRootPresence(root, named)
      : storePresence(root);
    const ctx: CommandContext = { root, json, readStdin: readAllStdin };
    const label = command.progress?.(positionals) ?? null;
    // The indicator is only ever shown to a person at a terminal, never to pipes or --json.
    const stop = label !== null && !json && io === PROCESS_IO && Deno.stderr.isTerminal()
      ? (await import("./commands/progress.ts")).startProgress(`${command.name}: ${label}`)
      : null;
    let result: CommandResult;
    try {
      result = await runCommand(command, ctx, flags, positionals);
    } finally {
      await stop?.();
    }
    const created = before.state || QUIET_CREATORS.has(command.name)
      ? null
      : storeCreatedNotice(root, before);
    if (created !== null) result.stderr = [...(result.stderr ?? []), created];
    return emit(result, json, io);
  } catch (error) {
    if (error instanceof BimriError) return emit(errorResult(error), json, io);
    return emit(errorResult(unexpectedFailure(error)), json, io);
  }
}

if (import.meta.main) {
  Deno.exit(await runCli(Deno.args));
}
