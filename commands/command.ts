/**
 * The command contract: each verb declares its flags and help, runs the
 * engine and returns a result object; rendering to text or JSON is last.
 */
import { BimriError } from "../engine/errors.ts";

/** One flag: a string value or a boolean switch, optionally with a one-letter alias. */
export type FlagDeclaration = { type: "string" | "boolean"; short?: string };

/** Flag declarations by long name. */
export type FlagSpec = Record<string, FlagDeclaration>;

/** Parsed flag values. */
export type FlagValues = Record<string, string | boolean | string[] | undefined>;

/** What the command layer gives each command. */
export type CommandContext = {
  /** The resolved store root (absolute). */
  root: string;
  /** True when the caller asked for JSON output. */
  json: boolean;
  /** Standard input, read lazily (hooks use it). */
  readStdin: () => string;
};

/** What a command returns; the dispatcher prints it. */
export type CommandResult = {
  /** Exit code (0 ok; 1 no match or failed check; 2 refused). */
  exitCode: number;
  /** Text for stdout (without the final newline handling: printed as is). */
  text: string;
  /** Lines for stderr (notices, warnings). */
  stderr?: string[];
  /** The JSON document for `--json`. */
  data: Record<string, unknown>;
  /** Exact `--json` output, printed instead of `data` (retrieval keeps the reference's document, without `ok`). */
  jsonText?: string;
};

/** A CLI verb. */
export type Command = {
  /** Verb name. */
  name: string;
  /** Other names that run this verb. */
  aliases?: string[];
  /** One-line summary for the command list. */
  summary: string;
  /** Usage line and flag descriptions for `--help`. */
  help: string;
  /** Flags the verb accepts (global flags are added by the dispatcher). */
  flags: FlagSpec;
  /** Positional arguments allowed (default 0). */
  positionals?: number;
  /** Runs the verb. */
  run: (
    ctx: CommandContext,
    flags: FlagValues,
    positionals: string[],
  ) => CommandResult | Promise<CommandResult>;
};

/** Flags every command accepts. */
export const GLOBAL_FLAGS: FlagSpec = {
  root: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
};

/**
 * Splits `args` into flag values and positionals, strictly: unknown flags, a
 * value given to a switch, a missing value, and a value that looks like a flag
 * (`--text --run`, usually a forgotten value) are refused; `--name=value`
 * passes any value; after `--` everything is positional. The last repeat of a
 * flag wins. (Hand-written rather than node:util's parseArgs, whose import
 * alone costs every CLI process tens of milliseconds.)
 */
export function parseFlags(
  spec: FlagSpec,
  args: readonly string[],
): { flags: FlagValues; positionals: string[] } {
  const flags: FlagValues = {};
  const positionals: string[] = [];
  const byShort = new Map<string, string>();
  for (const [name, declaration] of Object.entries(spec)) {
    if (declaration.short) byShort.set(declaration.short, name);
  }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    let name: string;
    let inline: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq === -1 ? undefined : arg.slice(eq + 1);
    } else if (arg.startsWith("-") && arg.length > 1) {
      // `-h`, or a group of one-letter switches such as `-hv`.
      const longs = Array.from(arg.slice(1), (letter) => byShort.get(letter));
      for (const long of longs) {
        if (long === undefined) throw new Error(`Unknown option '${arg}'.`);
      }
      if (longs.length > 1) {
        for (const long of longs as string[]) {
          if (spec[long].type !== "boolean") throw new Error(`Unknown option '${arg}'.`);
          flags[long] = true;
        }
        continue;
      }
      name = longs[0] as string;
    } else {
      positionals.push(arg);
      continue;
    }
    const declaration = Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (declaration === undefined) throw new Error(`Unknown option '--${name}'.`);
    if (declaration.type === "boolean") {
      if (inline !== undefined) throw new Error(`Option '--${name}' does not take an argument.`);
      flags[name] = true;
      continue;
    }
    if (inline !== undefined) {
      flags[name] = inline;
      continue;
    }
    const value = args[i + 1];
    if (value === undefined) throw new Error(`Option '--${name} <value>' argument missing.`);
    if (value.startsWith("-") && value !== "-") {
      throw new Error(
        `Option '--${name} <value>' argument is ambiguous: did you forget its value? ` +
          `To pass a value starting with a dash use '--${name}=${value}'.`,
      );
    }
    flags[name] = value;
    i++;
  }
  return { flags, positionals };
}

/** Parses a verb's arguments strictly: unknown flags and stray positionals are refused. */
export function parseCommandArgs(
  command: Command,
  args: string[],
): { flags: FlagValues; positionals: string[] } {
  let parsed;
  try {
    parsed = parseFlags({ ...GLOBAL_FLAGS, ...command.flags }, args);
  } catch (error) {
    throw new BimriError(
      "usage",
      `${command.name}: ${(error as Error).message} See \`bimri ${command.name} --help\`.`,
    );
  }
  const max = command.positionals ?? 0;
  if (parsed.positionals.length > max) {
    throw new BimriError(
      "usage",
      `${command.name}: unexpected argument ${
        JSON.stringify(parsed.positionals[max])
      }. See \`bimri ${command.name} --help\`.`,
    );
  }
  return parsed;
}

/** A string flag's value, or undefined. */
export function stringFlag(flags: FlagValues, name: string): string | undefined {
  const value = flags[name];
  return typeof value === "string" ? value : undefined;
}

/** A required string flag's value. */
export function requiredFlag(flags: FlagValues, command: string, name: string): string {
  const value = stringFlag(flags, name);
  if (value === undefined) {
    throw new BimriError(
      "usage",
      `${command}: --${name} is required. See \`bimri ${command} --help\`.`,
    );
  }
  return value;
}

/** A boolean flag's value. */
export function boolFlag(flags: FlagValues, name: string): boolean {
  return flags[name] === true;
}

/** A flag restricted to a fixed set of values. */
export function choiceFlag(
  flags: FlagValues,
  command: string,
  name: string,
  choices: readonly string[],
): string | undefined {
  const value = stringFlag(flags, name);
  if (value !== undefined && !choices.includes(value)) {
    throw new BimriError(
      "usage",
      `${command}: --${name} must be one of ${choices.join(", ")} (got ${JSON.stringify(value)}).`,
    );
  }
  return value;
}

/** A successful result with text and data. */
export function ok(
  text: string,
  data: Record<string, unknown>,
  stderr: string[] = [],
): CommandResult {
  return { exitCode: 0, text, data, stderr };
}
