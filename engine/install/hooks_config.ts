/**
 * Rendering the portable `hooks-example.json` into the machine-local
 * `.bimri/hooks.claude.local.json`: argument form, with `<bimri>` replaced by
 * the verified argv prefix and `--root` bound to `${CLAUDE_PROJECT_DIR}`.
 */
import { BimriError } from "../errors.ts";

/** The placeholder the portable template carries instead of a command. */
export const BIMRI_PLACEHOLDER = "<bimri>";
/** Seconds Claude Code gives each bimri hook. */
export const HOOK_TIMEOUT_SECONDS = 90;
/** Claude Code event -> bimri hook verb. */
export const HOOK_VERBS: Readonly<Record<string, string>> = {
  SessionStart: "hook-start",
  SessionEnd: "hook-close",
};

/** One rendered hook command in argument form. */
export type HookCommand = { command: string; args: string[]; timeout: number };

function invalidTemplate(): never {
  throw new BimriError(
    "store-unsafe",
    "hooks-example.json does not match bimri's argument-form hook template; reinstall bimri.",
  );
}

function asObject(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) invalidTemplate();
  return value as Record<string, unknown>;
}

/** Returns the template's single command object of `event` (validated). */
function templateCommand(hooks: Record<string, unknown>, event: string): Record<string, unknown> {
  const groups = hooks[event];
  if (!Array.isArray(groups) || groups.length !== 1) invalidTemplate();
  const commands = asObject(groups[0]).hooks;
  if (!Array.isArray(commands) || commands.length !== 1) invalidTemplate();
  const command = asObject(commands[0]);
  const args = command.args;
  if (
    command.type !== "command" || command.command !== BIMRI_PLACEHOLDER ||
    command.timeout !== HOOK_TIMEOUT_SECONDS || !Array.isArray(args) ||
    JSON.stringify(args) !== JSON.stringify(["--root", "${CLAUDE_PROJECT_DIR}", HOOK_VERBS[event]])
  ) invalidTemplate();
  return command;
}

/**
 * The rendered hook configuration (indent 2, template key order kept,
 * non-ASCII kept as is, one final newline).
 */
export function renderHooks(template: string, argvPrefix: readonly string[]): string {
  let payload: Record<string, unknown>;
  try {
    payload = asObject(JSON.parse(template));
  } catch (error) {
    if (error instanceof BimriError) throw error;
    invalidTemplate();
  }
  const hooks = asObject(payload.hooks);
  for (const event of Object.keys(HOOK_VERBS)) {
    const command = templateCommand(hooks, event);
    command.command = argvPrefix[0];
    command.args = [...argvPrefix.slice(1), ...(command.args as string[])];
  }
  return JSON.stringify(payload, null, 2) + "\n";
}

/** The rendered command of `event` with `${CLAUDE_PROJECT_DIR}` replaced by `projectDir`. */
export function renderedHookCommand(
  rendered: string,
  event: string,
  projectDir: string,
): HookCommand {
  const hooks = asObject(asObject(JSON.parse(rendered)).hooks);
  const groups = hooks[event];
  if (!Array.isArray(groups) || groups.length !== 1) invalidTemplate();
  const command = asObject((asObject(groups[0]).hooks as unknown[])[0]);
  const args = (command.args as string[]).map((arg) =>
    arg.replaceAll("${CLAUDE_PROJECT_DIR}", projectDir)
  );
  return {
    command: String(command.command),
    args,
    timeout: Number(command.timeout),
  };
}
