/** The registry of CLI verbs. */
import type { Command } from "./command.ts";
import { startCommand } from "./start.ts";
import { journalCommand } from "./journal.ts";
import { proposeCommand } from "./propose.ts";
import { syncCommand } from "./sync.ts";
import { maintainCommand } from "./maintain.ts";
import { closeCommand, recoverRunCommand } from "./close.ts";
import { statusCommand } from "./status.ts";
import { doctorCommand } from "./doctor.ts";
import { quarantineCommand } from "./quarantine.ts";
import { restoreCommand } from "./restore.ts";
import { reviewCommand } from "./review.ts";
import { resolveCommand } from "./resolve.ts";
import { migrateCommand } from "./migrate.ts";
import { indexCommand } from "./index.ts";
import { recallCommand } from "./recall.ts";
import { getCommand } from "./get.ts";
import { searchCommand } from "./search.ts";
import { mcpCommand } from "./mcp.ts";
import { uiCommand } from "./ui.ts";
import { hookCloseCommand, hookStartCommand } from "./hooks.ts";
import { installCommand, sentinelCommand } from "./install.ts";
import { shareCommand } from "./share.ts";
import { secretsCommand } from "./secrets.ts";

/** Every verb, in help order. */
export const COMMANDS: readonly Command[] = [
  startCommand,
  journalCommand,
  proposeCommand,
  syncCommand,
  maintainCommand,
  closeCommand,
  recoverRunCommand,
  statusCommand,
  doctorCommand,
  quarantineCommand,
  restoreCommand,
  reviewCommand,
  resolveCommand,
  shareCommand,
  secretsCommand,
  migrateCommand,
  indexCommand,
  recallCommand,
  getCommand,
  searchCommand,
  mcpCommand,
  uiCommand,
  hookStartCommand,
  hookCloseCommand,
  installCommand,
  sentinelCommand,
];

/** Finds a verb by name or alias. */
export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name || (c.aliases ?? []).includes(name));
}
