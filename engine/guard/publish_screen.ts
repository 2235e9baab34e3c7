/**
 * The credential screen of what `share` publishes to git: the current memory
 * `share init` seeds, and each record an export is about to write. A finding
 * refuses (nothing is published) and names the credential masked, its
 * fingerprint and the owner's next step: `secrets redact` or `secrets allow`.
 */
import { BimriError } from "../errors.ts";
import {
  type CredentialFinding,
  credentialKindName,
  findCredentials,
  redactText,
} from "../model/credentials.ts";
import { mapStrings } from "../model/json.ts";
import { openExisting, type Store, storeExists } from "../store/store.ts";
import { StorePaths } from "../store/paths.ts";
import { secretPolicy } from "./policy.ts";

/** One text about to be published and where it comes from (shown in the refusal). */
export type PublishedText = { where: string; text: string };

/** Every string `value` holds, depth first (a shared record's texts). */
export function recordStrings(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) { for (const item of value) recordStrings(item, out); }
  else if (typeof value === "object" && value !== null) {
    for (const item of Object.values(value)) recordStrings(item, out);
  }
  return out;
}

function refusal(action: string, where: string, found: CredentialFinding): BimriError {
  const fp = found.fingerprint;
  return new BimriError(
    "refused",
    `${action} refused: ${where} holds what looks like ${credentialKindName(found.kind)} ` +
      `(${found.kind}): ${found.masked}, fingerprint ${fp}; nothing was published to git. ` +
      `Rotate the credential and run \`bimri secrets redact ${fp} --human-approved\`, or, if ` +
      `it is not a secret (a test fixture's fake key), \`bimri secrets allow ${fp} ` +
      "--human-approved`; then run it again.",
  );
}

/**
 * Throws a `refused` BimriError naming the first credential among `texts`
 * that the policy of the project at `root` does not allow; `action` names
 * the command in the message (e.g. "share init").
 */
export function refuseCredentialsBeforePublishing(
  root: string,
  action: string,
  texts: Iterable<PublishedText>,
): void {
  const policy = secretPolicy(root);
  for (const { where, text } of texts) {
    const [found] = findCredentials(text, policy);
    if (found !== undefined) throw refusal(action, where, found);
  }
}

/**
 * `record` as it may be published (any shared record object: the guard room
 * does not import share/): a credential the owner is redacting (`secrets
 * redact` started or done) is replaced by its marker, as the redaction's own
 * revision will hold it; any other credential refuses with a `refused`
 * BimriError and nothing is written. `file` is where it would go.
 */
export function publishableRecord<R extends object>(root: string, file: string, record: R): R {
  const policy = secretPolicy(root);
  const redacted = policy.redacted ?? new Map<string, string>();
  const masked = redacted.size === 0
    ? record
    : mapStrings(record, (text) => redactText(text, redacted)) as R;
  refuseCredentialsBeforePublishing(
    root,
    "share export",
    recordStrings(masked).map((text) => ({ where: `the record ${file}`, text })),
  );
  return masked;
}

/** The texts of current memory (hot view lines and cold-current lines): what `share init` seeds. */
export function currentMemoryTexts(store: Store): PublishedText[] {
  const texts: PublishedText[] = store.head.view.entries.map(({ raw, entry }) => ({
    where: `current memory ${entry.key}`,
    text: raw,
  }));
  for (const [key, cold] of Object.entries(store.state.cold_current)) {
    texts.push({ where: `current memory ${key} (cold)`, text: cold.raw_line });
  }
  return texts;
}

/**
 * `refuseCredentialsBeforePublishing` over the current memory of the store at
 * `root`, read without the lock and without writing (nothing to screen when
 * there is no store yet): run before a command changes anything.
 */
export function refuseCredentialsInCurrentMemory(root: string, action: string): void {
  const paths = new StorePaths(root);
  if (!storeExists(paths)) return;
  refuseCredentialsBeforePublishing(root, action, currentMemoryTexts(openExisting(paths)));
}
