/** The registry of CLI verbs. */
import type { Command } from "./command.ts";
import { startCommand } from "./start.ts";
import { journalCommand } from "./journal.ts";
import { closeCommand, recoverRunCommand } from "./close.ts";
import { statusCommand } from "./status.ts";
import { doctorCommand } from "./doctor.ts";

/** Every verb, in help order. */
export const COMMANDS: readonly Command[] = [
  startCommand,
  journalCommand,
  closeCommand,
  recoverRunCommand,
  statusCommand,
  doctorCommand,
];

/** Finds a verb by name or alias. */
export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name || (c.aliases ?? []).includes(name));
}
