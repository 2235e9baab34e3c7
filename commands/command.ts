/**
 * The command contract: each verb declares its flags and help, runs the
 * engine and returns a result object; rendering to text or JSON is last.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { BimriError } from "../engine/errors.ts";

/** Flag declarations in node:util parseArgs form. */
export type FlagSpec = NonNullable<ParseArgsConfig["options"]>;

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

/** Parses a verb's arguments strictly: unknown flags and stray positionals are refused. */
export function parseCommandArgs(
  command: Command,
  args: string[],
): { flags: FlagValues; positionals: string[] } {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...GLOBAL_FLAGS, ...command.flags },
      strict: true,
      allowPositionals: true,
      allowNegative: false,
    });
  } catch (error) {
    const message = (error as Error).message.replace(/\s*To specify a positional argument.*$/s, "");
    throw new BimriError(
      "usage",
      `${command.name}: ${message} See \`bimri ${command.name} --help\`.`,
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
  return { flags: parsed.values as FlagValues, positionals: parsed.positionals };
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
