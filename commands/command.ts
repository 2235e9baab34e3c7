/**
 * The command contract: each verb declares its flags and help, runs the
 * engine and returns a result object; rendering to text or JSON is last.
 */
import { BimriError } from "../engine/errors.ts";
import { invalidChoice, parsePyInt } from "../engine/model/py_repr.ts";

/**
 * One flag: a string value or a boolean switch, optionally with a one-letter
 * alias. `integer` marks a string flag the reference declares `type=int`: its
 * value is read as Python's int() reads it and handed on as plain decimal text.
 */
export type FlagDeclaration = { type: "string" | "boolean"; short?: string; integer?: boolean };

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
  /** Standard input's bytes, read lazily (hooks use them). */
  readStdin: () => Uint8Array;
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
  /**
   * What a long verb is doing, for the terminal's progress indicator (null:
   * no indicator for these arguments). Shown only on a terminal, after a second.
   */
  progress?: (positionals: string[]) => string | null;
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

// The reference's subparsers know --help but not --root, and --json only on
// recall/get/search; our dispatcher accepts both after every verb. Letting
// them compete for prefixes would make `journal --r` ambiguous, where the
// reference reads --run, so they take a prefix only when no verb flag does.
const DISPATCHER_FLAGS: ReadonlySet<string> = new Set(["root", "json"]);

// argparse takes an argument that looks like a negative number as a value
// (its parsers declare no such option): `--offset -1` must reach the verb's
// range check instead of being refused as a forgotten value. Python's \d
// matches any Unicode decimal digit, and `$` also matches before a final newline.
// Built on first use: a \p{...} regex literal at a module's top level costs
// every process ~4M instructions of start-up (V8 checks it while parsing the
// module); inside a function it is checked only when the function first runs.
let negativeNumber: RegExp | null = null;
function isNegativeNumber(value: string): boolean {
  negativeNumber ??= /^-(?:\p{Nd}+|\p{Nd}*\.\p{Nd}+)\n?$/u;
  return negativeNumber.test(value);
}

/**
 * The flag `name` (as written after `--`) stands for: an exact name always
 * wins; otherwise the one flag it is a prefix of, as argparse's allow_abbrev
 * does. Names in `lowPriority` are prefix candidates only when no other flag
 * matches. Several candidates are refused as ambiguous.
 */
export function resolveFlagName(
  spec: FlagSpec,
  name: string,
  lowPriority: ReadonlySet<string> = new Set(),
): string {
  if (Object.hasOwn(spec, name)) return name;
  const matches = name === "" ? [] : Object.keys(spec).filter((flag) => flag.startsWith(name));
  const preferred = matches.filter((flag) => !lowPriority.has(flag));
  const candidates = preferred.length > 0 ? preferred : matches;
  if (candidates.length === 1) return candidates[0];
  if (candidates.length === 0) throw new Error(`Unknown option '--${name}'.`);
  throw new Error(
    `Option '--${name}' is ambiguous: it could be ${
      candidates.map((flag) => `--${flag}`).join(", ")
    }. Write more of the name.`,
  );
}

/**
 * Splits `args` into flag values and positionals, strictly: unknown flags, a
 * value given to a switch, a missing value, and a value that looks like a flag
 * (`--text --run`, usually a forgotten value) are refused; `--name=value`
 * passes any value, and so does a value that looks like a negative number;
 * after `--` everything is positional. A long flag may be shortened to any
 * unambiguous prefix (see resolveFlagName). An integer flag's value is
 * checked and normalized (` +1_0 ` becomes `10`). The last repeat of a flag
 * wins. (Hand-written rather than node:util's parseArgs, whose import alone
 * costs every CLI process tens of milliseconds, and which has no prefixes.)
 */
export function parseFlags(
  spec: FlagSpec,
  args: readonly string[],
  lowPriority: ReadonlySet<string> = new Set(),
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
      name = resolveFlagName(spec, eq === -1 ? arg.slice(2) : arg.slice(2, eq), lowPriority);
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
    const declaration = spec[name];
    if (declaration.type === "boolean") {
      if (inline !== undefined) throw new Error(`Option '--${name}' does not take an argument.`);
      flags[name] = true;
      continue;
    }
    let value = inline;
    if (value === undefined) {
      value = args[i + 1];
      if (value === undefined) throw new Error(`Option '--${name} <value>' argument missing.`);
      if (value.startsWith("-") && value !== "-" && !isNegativeNumber(value)) {
        throw new Error(
          `Option '--${name} <value>' argument is ambiguous: did you forget its value? ` +
            `To pass a value starting with a dash use '--${name}=${value}'.`,
        );
      }
      i++;
    }
    flags[name] = declaration.integer ? integerText(name, value) : value;
  }
  return { flags, positionals };
}

// One reader for every `type=int` flag of the reference; the verb checks the range.
function integerText(name: string, value: string): string {
  const parsed = parsePyInt(value);
  if (parsed === undefined) {
    throw new Error(`Option '--${name}' needs a whole number (got ${JSON.stringify(value)}).`);
  }
  return parsed.toString();
}

/** Parses a verb's arguments strictly: unknown flags and stray positionals are refused. */
export function parseCommandArgs(
  command: Command,
  args: string[],
): { flags: FlagValues; positionals: string[] } {
  let parsed;
  try {
    parsed = parseFlags({ ...GLOBAL_FLAGS, ...command.flags }, args, DISPATCHER_FLAGS);
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

/** An integer flag's value (parseFlags has already checked and normalized it), or undefined. */
export function integerFlag(flags: FlagValues, name: string): number | undefined {
  const value = stringFlag(flags, name);
  return value === undefined ? undefined : Number(value);
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
      `${command}: ${invalidChoice(name, value, choices)}. See \`bimri ${command} --help\`.`,
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
