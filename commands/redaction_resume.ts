/**
 * Finishes an interrupted `secrets redact` before the next writing command:
 * its receipt in `.bimri-secrets.json` still says `started`, so the same
 * redaction is run again (it resumes from what is durable) under the engine
 * lock, then the command runs. A redaction cut short before its receipt was
 * written changed nothing of memory (only its backup, outside memory, exists):
 * there is nothing to finish and the store is as before it.
 */
import { BimriError } from "../engine/errors.ts";
import { readPolicyFile } from "../engine/guard/policy.ts";
import { utcTimestamp } from "../engine/model/time.ts";
import { finishSavedRechains, redactSecret } from "../engine/redaction/redact.ts";
import { withStore } from "../engine/store/store.ts";

/** The verbs that take the engine lock to write memory, and so finish a pending redaction first. */
const WRITING_VERBS = new Set([
  "start",
  "journal",
  "propose",
  "sync",
  "close",
  "recover-run",
  "resolve",
  "maintain",
  "index",
  "migrate",
  "hook-start",
  "hook-close",
  "status",
  "quarantine-authority",
  "restore-authority",
  "share",
  "doctor", // unless --read-only
]);

/**
 * Finishes every redaction whose receipt is not `done` when `verb` writes
 * memory (`readOnly`: its --read-only flag was given); returns the notices to print on stderr (none when nothing was
 * pending, which costs one read of the policy file).
 */
export function finishPendingRedactions(verb: string, root: string, readOnly: boolean): string[] {
  if (!WRITING_VERBS.has(verb) || readOnly) return [];
  let pending: string[];
  try {
    pending = (readPolicyFile(root).redacted ?? [])
      .filter((item) => item.status !== "done")
      .map((item) => item.fingerprint);
  } catch (error) {
    if (error instanceof BimriError) return []; // the commands that read the policy report it
    throw error;
  }
  if (pending.length === 0) return [];
  const notices: string[] = [];
  // An interrupted rewrite of hash-bound records first: until then the store cannot load.
  finishSavedRechains(root);
  for (const fingerprint of pending) {
    try {
      const { entry } = withStore(
        root,
        (store) => redactSecret(store, fingerprint, utcTimestamp()),
      );
      notices.push(
        `BIMRI NOTICE: finished the interrupted redaction of ${fingerprint} (${entry.kind}): ` +
          `${entry.rewritten.length} file(s) rewritten, ${entry.kept.length} kept with the ` +
          `secret masked; its backup ${entry.backup} holds the old bytes: delete it once the ` +
          "credential is rotated.",
      );
    } catch (error) {
      if (!(error instanceof BimriError)) throw error;
      notices.push(
        `BIMRI WARNING: the interrupted redaction of ${fingerprint} could not be finished ` +
          `(${error.message}); run \`bimri secrets redact ${fingerprint} --human-approved\` ` +
          "to retry it. Output stays masked meanwhile.",
      );
    }
  }
  return notices;
}
