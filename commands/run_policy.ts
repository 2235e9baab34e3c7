/**
 * What the runner (commands/run.ts) does only for a project with a policy
 * file: finish a `secrets redact` cut short before the verb, and mask every
 * secret the owner redacted in what the verb prints. Without a policy file
 * neither can apply, and this module does not load.
 */
import type { CommandResult } from "./command.ts";
import { mapStrings } from "../engine/model/json.ts";

/**
 * Finishes a `secrets redact` cut short (redaction_resume.ts). On a shared
 * store whose verb wired only team memory's idle check, the redaction's own
 * commit needs the export: it stops as a crash would (the redaction resumes
 * from any durable step), the export loads, and it resumes once more.
 * `shareWiring`: run.ts's share_wiring.ts when the verb wired team memory.
 */
export async function resumeRedactions(
  name: string,
  root: string,
  readOnly: boolean,
  shareWiring: typeof import("./share_wiring.ts") | null,
): Promise<string[]> {
  const { finishPendingRedactions } = await import("./redaction_resume.ts");
  try {
    return finishPendingRedactions(name, root, readOnly);
  } catch (error) {
    if (shareWiring === null || !(error instanceof shareWiring.ShareExportPending)) throw error;
    await error.load();
    return finishPendingRedactions(name, root, readOnly);
  }
}

/**
 * `result` with every secret the owner redacted (`secrets redact`) replaced
 * by its marker, in text, stderr and JSON alike; unchanged when nothing was
 * redacted. Called only when a policy file may exist (without one, nothing
 * is loaded).
 */
export async function maskRedacted(root: string, result: CommandResult): Promise<CommandResult> {
  const [{ secretPolicy }, { redactText }] = await Promise.all([
    import("../engine/guard/policy.ts"),
    import("../engine/model/credentials.ts"),
  ]);
  let redacted: ReadonlyMap<string, string> | undefined;
  try {
    redacted = secretPolicy(root).redacted;
  } catch {
    return result; // a malformed policy is reported by the commands that read it
  }
  if (redacted === undefined || redacted.size === 0) return result;
  const mask = (text: string) => redactText(text, redacted);
  return {
    ...result,
    text: mask(result.text),
    stderr: result.stderr?.map(mask),
    data: mapStrings(result.data, mask) as Record<string, unknown>,
    jsonText: result.jsonText === undefined ? undefined : mask(result.jsonText),
  };
}
