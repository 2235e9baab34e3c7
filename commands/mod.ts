/** The registry of CLI verbs, and the main help that lists them (`bimri --help`). */
import type { Command } from "./command.ts";
import { VERBS } from "./verbs.ts";
import { searchCommand } from "./search.ts";
import { mcpCommand } from "./mcp.ts";
import { uiCommand } from "./ui.ts";

const ADAPTERS_AT = VERBS.indexOf(searchCommand) + 1;

/** Every verb, in help order (the adapters mcp and ui follow `search`). */
export const COMMANDS: readonly Command[] = [
  ...VERBS.slice(0, ADAPTERS_AT),
  mcpCommand,
  uiCommand,
  ...VERBS.slice(ADAPTERS_AT),
];

/** Finds a verb by name or alias. */
export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name || (c.aliases ?? []).includes(name));
}

/** The text of `bimri --help`, listing `commands` (internal verbs stay hidden). */
export function mainHelp(commands: readonly Command[]): string {
  const listed = commands.filter((c) => !c.name.startsWith("__")); // internal verbs stay hidden
  const width = Math.max(...listed.map((c) => c.name.length));
  const verbs = listed.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join("\n");
  return `usage: bimri [--root DIR] [--json] [COMMAND] [flags]

One durable memory that every local coding agent in a project shares.
Without a command, bimri prints status.

Commands:
${verbs}

Global flags:
  --root DIR   the project folder (default: BIMRI_ROOT, else the nearest
               ancestor holding .bimri/, else the working directory)
  --json       print the result as one JSON document
  --version    print bimri's release and the formats it reads and writes
  --help       this help; \`bimri COMMAND --help\` for a command's flags
`;
}
