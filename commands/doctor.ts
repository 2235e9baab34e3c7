/** `doctor` (alias `validate`): audit the store; `--read-only` writes nothing at all. */
import { auditStore, prepareAudit } from "../engine/integrity/doctor.ts";
import { forgetSummary } from "../engine/integrity/summary.ts";
import { StorePaths } from "../engine/store/paths.ts";
import { withStore } from "../engine/store/store.ts";
import { withSharedEngineLock } from "../engine/store/lock.ts";
import { lstatOrNull } from "../engine/store/files.ts";
import { syncView } from "../engine/memory/view_sync.ts";
import { rebuildIndex } from "../engine/retrieval/index_tsv.ts";
import { BimriError } from "../engine/errors.ts";
import { LegacyRetirementPending } from "../engine/store/legacy_root.ts";
import { claimOfState, type RecordProver, requireLineage } from "../engine/records/legacy_claim.ts";
import { loadRecordProver } from "../engine/migrate/lineage_prover.ts";
import { isShared, loadShare } from "../engine/share/state.ts";
import { hasShareFolder } from "../engine/share/init.ts";
import { alteredOwnRecords } from "../engine/share/keep.ts";
import { ownKeyProblem } from "../engine/share/sign.ts";
import {
  gapLines,
  moreProblemsLine,
  namedProblems,
  problemMessage,
  scanShare,
  totalWaiting,
} from "../engine/share/scan.ts";
import { distrustedLines, holdUntrusted } from "../engine/share/trust.ts";
import { trackedLocalProblem } from "../engine/share/tracked_local.ts";
import {
  scanStoreForSecrets,
  type StoredSecret,
  storedSecretLine,
  storedSecretsAdvice,
} from "../engine/integrity/secrets_scan.ts";
import { SHARE_SCANNED_FILES } from "../engine/share/secrets_files.ts";
import { readPolicyFile, secretPolicy } from "../engine/guard/policy.ts";
import { DEFAULT_SECRET_POLICY } from "../engine/model/credentials.ts";
import { boolFlag, type Command, type CommandResult } from "./command.ts";

function render(readOnly: boolean, passed: boolean, errors: string[], warnings: string[]): string {
  const title = `BIMRI doctor${readOnly ? " (read-only)" : ""}: ${passed ? "PASSED" : "FAILED"}`;
  // As the reference prints it: a FAILED report lists only the errors (scripts
  // count them), a PASSED one its warnings; --json carries both lists.
  const items = passed ? warnings : errors;
  return [title, ...items.map((item) => `  - ${item}`)].join("\n") + "\n";
}

/**
 * The audit, under the engine lock held shared when the store has a lock file
 * (as the reference audits under its lock): a writer's commit in progress
 * would otherwise read as damage, a proposal without its log marker or a head
 * without its state. Without a regular lock file the audit runs unlocked and
 * reports it; --read-only never creates one.
 */
function auditUnderLock(
  paths: StorePaths,
  prover: RecordProver | null,
): ReturnType<typeof auditStore> {
  const lock = lstatOrNull(paths.lock);
  if (lock === null || lock.isSymlink || !lock.isFile) return auditStore(paths, undefined, prover);
  return withSharedEngineLock(paths, () => auditStore(paths, undefined, prover));
}

/** Refused shared records (team memory), reported without failing the store's own audit. */
function shareWarnings(paths: StorePaths): string[] {
  // Also before the store is shared, in a project that shares (a fresh clone may
  // have checked such files out); a project that does not share may track its store.
  if (!isShared(paths)) return hasShareFolder(paths.root) ? trackedLocalLines(paths.root) : [];
  try {
    const ctx = loadShare(paths, false);
    if (ctx === null) return [];
    const scan = scanShare(ctx);
    const waiting = totalWaiting(scan);
    const questions = holdUntrusted(ctx, new Map(scan.pending), scan.waiting);
    // A pusher's thousands of junk files are counted, not each listed.
    const moreProblems = moreProblemsLine(scan.problems);
    // Reported only: doctor writes nothing into .bimri-share/.
    const altered = alteredOwnRecords(ctx).map((a) =>
      `team memory: ${a.file} was altered after this clone wrote it (other clones refuse it); run \`bimri share status\` to write it back from .bimri/share-sent/.`
    );
    const key = ownKeyProblem(ctx);
    return [
      ...altered,
      ...(key === null ? [] : [`team memory: ${key}`]),
      ...namedProblems(scan.problems).named.map((p) => problemMessage(p)),
      ...(moreProblems === null ? [] : [moreProblems]),
      ...(waiting > 0
        ? [
          `team memory: ${waiting} records from other clones are waiting; run \`bimri share pull\`.`,
        ]
        : []),
      ...gapLines(scan),
      // Records an untrusted replica holds wait for the owner's decision.
      ...questions.map((q) => q.text),
      // share: every replica the owner distrusts, records waiting or not.
      ...distrustedLines(paths, new Set(questions.map((q) => q.replica))),
      ...trackedLocalLines(paths.root),
    ];
  } catch (error) {
    if (!(error instanceof BimriError)) throw error;
    return [`team memory: ${error.message}`];
  }
}

/** The refusal the share verbs would give for a local store that git tracks (or cannot say). */
function trackedLocalLines(root: string): string[] {
  const problem = trackedLocalProblem(root, "share pull, trust and distrust refuse to run");
  return problem === null ? [] : [`team memory: ${problem}`];
}

/**
 * Credential-looking strings already in the store, each as a `BIMRI SECRET`
 * line on stderr. They are findings, not audit errors: the store stays valid
 * (the reference engine passes it too), so doctor's verdict and exit code are
 * unchanged and stdout stays the reference's report.
 */
function storedSecrets(
  paths: StorePaths,
  root: string,
  write: boolean,
  stderr: string[],
): StoredSecret[] {
  let policy = DEFAULT_SECRET_POLICY;
  try {
    policy = secretPolicy(root);
  } catch (error) {
    if (!(error instanceof BimriError)) throw error;
    stderr.push(`BIMRI WARNING: ${error.message}`);
  }
  const all = scanStoreForSecrets(paths, policy, write, SHARE_SCANNED_FILES);
  const redacted = policy.redacted ?? new Map<string, string>();
  const secrets = all.filter((secret) => !redacted.has(secret.fingerprint));
  for (const secret of secrets) stderr.push(`BIMRI SECRET: ${storedSecretLine(secret)}`);
  if (secrets.length > 0) stderr.push(`BIMRI SECRET: ${storedSecretsAdvice(secrets)}`);
  const kept = all.length - secrets.length;
  if (kept > 0) {
    stderr.push(
      `BIMRI NOTICE: ${kept} redacted credential-looking string(s) remain in records whose ` +
        "hashes cover their bytes; bimri masks them in everything it prints (see " +
        "`bimri secrets list`).",
    );
  }
  try {
    for (const item of readPolicyFile(root).redacted ?? []) {
      if (item.status !== "done") {
        stderr.push(
          `BIMRI WARNING: the redaction of ${item.fingerprint} was interrupted; the next ` +
            "writing command (start, journal, propose, sync, close, status, doctor without " +
            "--read-only...) finishes it, or run " +
            `\`bimri secrets redact ${item.fingerprint} --human-approved\` again.`,
        );
      }
    }
  } catch (error) {
    if (!(error instanceof BimriError)) throw error;
  }
  return secrets;
}

/** The doctor verb. */
export const doctorCommand: Command = {
  name: "doctor",
  aliases: ["validate"],
  summary: "audit the store's integrity (exit 1 on any error)",
  help: `usage: bimri doctor [--read-only]

Audits state, revisions and the head hash, memory grammar and bounds, every
proposal, decision, conflict and resolution, the authority graph, recovery
evidence and restore receipts, run logs, pointers and the index. Prints PASSED
(with any warnings) or FAILED with one line per error (warnings then show
only in --json); exits 1 on any error.
Without --read-only it first opens the store (a store that cannot be opened,
such as an unreadable state.json or a missing head, stops it with exit 2 and
nothing reset), heals bimri.md (preserving a manual edit) and, when the audit
finds no error, rebuilds the index.

  --read-only  audit with zero writes (no layout, view healing, index or recovery records)`,
  flags: { "read-only": { type: "boolean" } },
  progress: () => "auditing the store",
  async run(ctx, flags): Promise<CommandResult> {
    const readOnly = boolFlag(flags, "read-only");
    const stderr: string[] = [];
    const paths = new StorePaths(ctx.root);
    // The converter that proves a v1-v3 record loads only for a store that has one.
    const prover = await loadRecordProver(paths);
    await prepareAudit(paths);
    // At most one finding: why bimri.md could not be healed.
    const viewErrors: string[] = [];
    if (!readOnly) {
      try {
        withStore(ctx.root, (store) => {
          // A broken v1-v3 lineage stops the load, as the reference's does.
          requireLineage(store.paths, claimOfState(store.state), prover);
          try {
            const sync = syncView(store);
            stderr.push(...sync.notices, ...sync.warnings);
          } catch (error) {
            // The store opened, so the audit still runs; a view that could not
            // be healed is one of its findings, as the reference reports it.
            if (!(error instanceof BimriError)) throw error;
            viewErrors.push(`generated view recovery failed: ${error.message}`);
          }
        });
      } catch (error) {
        // A store that cannot be opened (unreadable or invalid state, missing or
        // altered head) stops plain doctor with exit 2, as the reference's load
        // does: it never audits, heals or resets around the damage. A busy store
        // stops the same way. --read-only is the command that reports damage.
        // A pending v1-v3 retirement is finished by the command runner, which runs doctor again.
        if (
          !(error instanceof BimriError) || error.code === "busy" ||
          error instanceof LegacyRetirementPending
        ) throw error;
        throw new BimriError(
          error.code,
          `doctor cannot open the store: ${error.message} Run doctor --read-only for the full audit; nothing was reset.`,
        );
      }
    }
    const audit = auditUnderLock(paths, prover);
    audit.warnings.push(...shareWarnings(paths));
    const report = viewErrors.length === 0 ? audit : {
      passed: false,
      errors: [...viewErrors, ...audit.errors],
      warnings: audit.warnings,
    };
    // A failed full audit must also stop the everyday fast path of sync and close.
    if (!readOnly && !report.passed) forgetSummary(paths);
    let indexRows: number | null = null;
    if (!readOnly && report.passed) {
      try {
        indexRows = withStore(ctx.root, (store) => rebuildIndex(store));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        stderr.push(`BIMRI WARNING: index rebuild failed (${message}); run index to retry.`);
      }
    }
    const secrets = storedSecrets(paths, ctx.root, !readOnly, stderr);
    return {
      exitCode: report.passed ? 0 : 1,
      text: render(readOnly, report.passed, report.errors, report.warnings),
      stderr,
      data: {
        passed: report.passed,
        read_only: readOnly,
        errors: report.errors,
        warnings: report.warnings,
        index_rows: indexRows,
        credentials: secrets,
      },
    };
  },
};
