/**
 * `secrets allow|disable|enable|list`: the owner's credential policy kept in
 * the committed file `.bimri-secrets.json` (fingerprints and rule names only).
 */
import { visible } from "../engine/model/visible.ts";
import { BimriError } from "../engine/errors.ts";
import {
  allowFingerprint,
  POLICY_FILE,
  readPolicyFile,
  requireFingerprint,
  setRule,
} from "../engine/guard/policy.ts";
import { CREDENTIAL_KINDS } from "../engine/model/credentials.ts";
import { utcTimestamp } from "../engine/model/time.ts";
import { finishSavedRechains, redactSecret } from "../engine/redaction/redact.ts";
import { withStore } from "../engine/store/store.ts";
import { boolFlag, type Command, ok } from "./command.ts";

const HELP = `usage: bimri secrets allow FINGERPRINT --human-approved
       bimri secrets disable RULE --human-approved
       bimri secrets enable RULE
       bimri secrets list
       bimri secrets redact FINGERPRINT --human-approved

bimri refuses credentials in everything written into memory. The owner's
exceptions live in ${POLICY_FILE} at the project root: commit it, so changes are
reviewed. It holds SHA-256 fingerprints and rule names, never a secret.

  allow    let one exact string through (its fingerprint, as the refusal or
           \`bimri doctor\` printed it), e.g. a test fixture's fake key
  disable  switch one rule off (${CREDENTIAL_KINDS.join(", ")})
  enable   switch a rule back on (no approval needed)
  list     show the allowed fingerprints, the rules switched off and the redactions
  redact   remove a credential from every record of an unshared store (hashes recomputed;
           in a shared store: log lines and current memory), and from this clone's
           unpushed share records; mask it in everything bimri prints, back the old
           files up in .bimri-redaction-backups/ and keep a receipt in ${POLICY_FILE}
  --human-approved  attests that the owner explicitly asked for this change`;

function ownerOnly(what: string, example: string): BimriError {
  return new BimriError(
    "refused",
    `secrets ${what} lets credentials into memory, so only the owner may do it: ask them, and ` +
      `when they agree run \`${example} --human-approved\`. No agent flag switches the guard off.`,
  );
}

/** The secrets verb. */
export const secretsCommand: Command = {
  name: "secrets",
  summary: "the owner's credential guard policy: allow a fingerprint, switch a rule off or on",
  help: HELP,
  flags: { "human-approved": { type: "boolean" } },
  positionals: 2,
  run(ctx, flags, positionals) {
    const [action, arg] = positionals;
    const approved = boolFlag(flags, "human-approved");
    const need = (what: string) => {
      if (arg === undefined) {
        throw new BimriError("usage", `secrets ${action}: name the ${what}.\n${HELP}`);
      }
      return arg;
    };
    if (action === "allow") {
      const fingerprint = requireFingerprint(need("fingerprint"));
      if (!approved) throw ownerOnly("allow", `bimri secrets allow ${fingerprint}`);
      const added = allowFingerprint(ctx.root, fingerprint, utcTimestamp());
      return ok(
        `BIMRI: ${added ? "allowed" : "already allowed"} ${fingerprint} in ${POLICY_FILE}; ` +
          "commit that file so the exception is reviewed.\n",
        { allowed: fingerprint, changed: added, file: POLICY_FILE },
      );
    }
    if (action === "disable" || action === "enable") {
      const rule = need("rule");
      const on = action === "enable";
      if (!on && !approved) throw ownerOnly("disable", `bimri secrets disable ${rule}`);
      const changed = setRule(ctx.root, rule, on);
      return ok(
        `BIMRI: rule ${rule} ${on ? "on" : "off"}${changed ? "" : " (unchanged)"} in ` +
          `${POLICY_FILE}; commit that file so the change is reviewed.\n`,
        { rule, on, changed, file: POLICY_FILE },
      );
    }
    if (action === "redact") {
      const fingerprint = requireFingerprint(need("fingerprint"));
      if (!approved) throw ownerOnly("redact", `bimri secrets redact ${fingerprint}`);
      finishSavedRechains(ctx.root); // an interrupted rewrite first: until then the store cannot load
      return withStore(ctx.root, (store) => {
        const { entry, shared, keys, held } = redactSecret(store, fingerprint, utcTimestamp());
        const lines = [
          `BIMRI: redacted ${entry.kind} ${fingerprint}: ${entry.rewritten.length} file(s) rewritten, ` +
          `${entry.kept.length} kept with the secret masked in all output.`,
          ...keys.map((key) => `MEMORY ${key}: a new revision holds the marker instead`),
          ...(held > 0
            ? [`${held} of those changes were held: run \`bimri review\` to settle them.`]
            : []),
          // File names the scan found (anyone who can push names files): shown, never obeyed.
          ...entry.rewritten.map((file) => `REWRITTEN ${visible(file)}`),
          ...entry.kept.map((file) => `KEPT ${visible(file)}`),
          `BACKUP ${entry.backup}: it holds the old bytes (and the secret); delete it once the ` +
          "credential is rotated.",
          "Rotate the credential now: it has been in memory, and memory is shared.",
        ];
        if (shared.length > 0) {
          lines.push(
            "Shared records git already carried (pushed) hold it: git history holds it too. Rewrite " +
              "those files' history (e.g. `git filter-repo --replace-text`), force-push, have " +
              "every clone re-clone, and rotate the credential.",
          );
        }
        return ok(lines.join("\n") + "\n", { ...entry, shared, memory_keys: keys, held });
      });
    }
    if (action === "list" || action === undefined) {
      const file = readPolicyFile(ctx.root);
      const lines = [
        `BIMRI SECRETS: ${file.allowed.length} allowed, ${file.disabled_rules.length} rules off (${POLICY_FILE})`,
        ...file.allowed.map((item) => `ALLOWED ${item.fingerprint} ${item.allowed_at}`),
        ...file.disabled_rules.map((rule) => `RULE OFF ${rule}`),
        ...(file.redacted ?? []).map((item) =>
          `REDACTED ${item.fingerprint} ${item.kind} ${item.status} ${item.redacted_at}`
        ),
      ];
      return ok(lines.join("\n") + "\n", {
        allowed: file.allowed.map((item) => item.fingerprint),
        disabled_rules: file.disabled_rules,
        redacted: file.redacted ?? [],
      });
    }
    throw new BimriError("usage", `secrets: unknown action ${JSON.stringify(action)}.\n${HELP}`);
  },
};
