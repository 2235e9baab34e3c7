/** The registry of CLI verbs. */
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
