/** The verb table the adapters look verbs up in: every verb except the adapters' own (mcp, ui). */
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
import { hookCloseCommand, hookStartCommand } from "./hooks.ts";
import { installCommand, sentinelCommand } from "./install.ts";
import { shareCommand } from "./share.ts";
import { secretsCommand } from "./secrets.ts";

/** Every verb but mcp and ui, in help order (commands/mod.ts adds the two after `search`). */
export const VERBS: readonly Command[] = [
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
  hookStartCommand,
  hookCloseCommand,
  installCommand,
  sentinelCommand,
];

/** Finds a verb of VERBS by name or alias (what the MCP server and the console run). */
export function findVerb(name: string): Command | undefined {
  return VERBS.find((c) => c.name === name || (c.aliases ?? []).includes(name));
}
