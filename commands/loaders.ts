/**
 * Verb name -> module loader. The CLI loads only the module of the verb it
 * runs, so an everyday command does not pay start-up time for the installer,
 * the MCP server or the integrity tools. `commands/mod.ts` keeps the full
 * registry; a unit test keeps the two in step.
 */
import type { Command } from "./command.ts";

/** Loads one verb's module on demand (only the verb being run is ever loaded). */
export type Loader = () => Promise<Command>;

/** Loaders for every verb and alias. */
export const COMMAND_LOADERS: Readonly<Record<string, Loader>> = {
  start: () => import("./start.ts").then((m) => m.startCommand),
  journal: () => import("./journal.ts").then((m) => m.journalCommand),
  propose: () => import("./propose.ts").then((m) => m.proposeCommand),
  sync: () => import("./sync.ts").then((m) => m.syncCommand),
  maintain: () => import("./maintain.ts").then((m) => m.maintainCommand),
  close: () => import("./close.ts").then((m) => m.closeCommand),
  "recover-run": () => import("./close.ts").then((m) => m.recoverRunCommand),
  status: () => import("./status.ts").then((m) => m.statusCommand),
  doctor: () => import("./doctor.ts").then((m) => m.doctorCommand),
  validate: () => import("./doctor.ts").then((m) => m.doctorCommand),
  "quarantine-authority": () => import("./quarantine.ts").then((m) => m.quarantineCommand),
  "restore-authority": () => import("./restore.ts").then((m) => m.restoreCommand),
  review: () => import("./review.ts").then((m) => m.reviewCommand),
  resolve: () => import("./resolve.ts").then((m) => m.resolveCommand),
  share: () => import("./share.ts").then((m) => m.shareCommand),
  secrets: () => import("./secrets.ts").then((m) => m.secretsCommand),
  migrate: () => import("./migrate.ts").then((m) => m.migrateCommand),
  index: () => import("./index.ts").then((m) => m.indexCommand),
  recall: () => import("./recall.ts").then((m) => m.recallCommand),
  get: () => import("./get.ts").then((m) => m.getCommand),
  search: () => import("./search.ts").then((m) => m.searchCommand),
  mcp: () => import("./mcp.ts").then((m) => m.mcpCommand),
  ui: () => import("./ui.ts").then((m) => m.uiCommand),
  "hook-start": () => import("./hooks.ts").then((m) => m.hookStartCommand),
  "hook-close": () => import("./hooks.ts").then((m) => m.hookCloseCommand),
  install: () => import("./install.ts").then((m) => m.installCommand),
  "__bimri-sentinel": () => import("./install.ts").then((m) => m.sentinelCommand),
};

/** Loads the verb named `name` (or an alias), or undefined for an unknown verb. */
export async function loadCommand(name: string): Promise<Command | undefined> {
  const loader = Object.hasOwn(COMMAND_LOADERS, name) ? COMMAND_LOADERS[name] : undefined;
  return loader ? await loader() : undefined;
}
