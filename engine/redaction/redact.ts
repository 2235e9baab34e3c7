/**
 * `secrets redact`: removes one credential (by fingerprint) from every file of
 * the store whose bytes no hash covers (and from this clone's share records
 * not yet pushed, signed again: unpushed_share.ts), masks it in everything bimri prints,
 * and keeps a backup outside memory and a receipt. Durable steps, in order:
 * backup copies, the receipt marked `started` in `.bimri-secrets.json`
 * (masking is on from here), each rewrite (atomic replace), the receipt
 * marked `done`. A run killed anywhere is finished by running it again; the
 * output is masked from the `started` step on.
 */
import { join } from "node:path";
import { BimriError } from "../errors.ts";
import { redactText } from "../model/credentials.ts";
import { atomicReplace, readBytesOrNull } from "../store/files.ts";
import { faultPoint } from "../store/fault.ts";
import { invalidateAuditWitness, type Store } from "../store/store.ts";
import { scanStoreForSecrets } from "../integrity/secrets_scan.ts";
import { startRun } from "../memory/start_run.ts";
import { propose } from "../memory/propose.ts";
import { closeRun } from "../memory/close_run.ts";
import { applyShareRewrite, planUnpushedShareRewrites } from "./unpushed_share.ts";
import {
  applyRechainFile,
  pendingRechain,
  planRechain,
  rechainCovers,
  type RechainFile,
} from "./rechain.ts";
import { isShared } from "../share/state.ts";
import { SHARE_SCANNED_FILES } from "../share/secrets_files.ts";
import { withEngineLock } from "../store/lock.ts";
import { StorePaths } from "../store/paths.ts";
import {
  readPolicyFile,
  type RedactionEntry,
  requireFingerprint,
  textScreenOf,
  writePolicyFile,
} from "../guard/policy.ts";

/** The folder (at the project root, outside memory) where redaction backups go. */
export const BACKUP_FOLDER = ".bimri-redaction-backups";

/** What `secrets redact` did. */
export type RedactResult = {
  entry: RedactionEntry;
  /** Keys of current memory given a new revision with the secret replaced by its marker. */
  keys: string[];
  /** How many of those changes were held (not applied) by the commit protocol. */
  held: number;
  /** Files under `.bimri-share/` that held the secret (git history may hold it too). */
  shared: string[];
};

/** Only journal and outcome lines of a run log carry text no hash or marker binds. */
const FREE_LOG_LINE = /^\[(?:ID:R[0-9]{6}-E[0-9]{3}|OUTCOME:[a-z]+)\]/;
const LOG_FILE = /^\.bimri\/log\/R[0-9]{6}\.md$/;

/** Why a file holding the secret cannot be rewritten without failing the audit. */
export function whyKept(file: string): string {
  if (file === "bimri.md" || file.startsWith(".bimri/revisions/")) {
    return "the head hash and later proposals' base hashes cover the revision's exact bytes";
  }
  if (file.startsWith(".bimri/proposals/")) {
    return "conflicts bind proposal bytes by hash and the log's marker repeats the text";
  }
  if (file.startsWith(".bimri/decisions/")) return "base_hash/effect_hash bind the lines it holds";
  if (file.startsWith(".bimri/conflicts/") || file.startsWith(".bimri/resolutions/")) {
    return "current_hash and the candidates' hashes bind what it holds";
  }
  if (file.startsWith(".bimri/archive/") || file === ".bimri/state.json") {
    return "cold_current binds archived lines by hash";
  }
  if (LOG_FILE.test(file)) return "a [PROPOSE:] marker must repeat its proposal's text";
  if (file === ".bimri/index.tsv") return "derived from the view and rebuilt from it";
  if (file.startsWith(".bimri-share/")) return "a shared record is immutable and carried by git";
  if (file.startsWith(".bimri/recovery/") || file.startsWith(".bimri/backups/")) {
    return "recovery evidence and backups are named by the SHA-256 of their bytes";
  }
  return "not a record kind redaction rewrites";
}

/** The plan of a rechain, in the redaction's backup folder. */
const RECHAIN_PLAN = "rechain-plan.json";

function readSavedPlan(path: string): RechainFile[] | null {
  const bytes = readBytesOrNull(path);
  if (bytes === null) return null;
  try {
    const plan = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
    if (
      Array.isArray(plan) &&
      plan.every((item) =>
        typeof item?.file === "string" && typeof item?.after === "string" &&
        typeof item?.before === "string" &&
        (item.file === "bimri.md" || item.file.startsWith(".bimri/"))
      )
    ) return plan as RechainFile[];
  } catch { /* a torn plan: planned again from the unchanged store */ }
  return null;
}

/**
 * Finishes, under the engine lock and before the store is loaded, the
 * rewrite of every interrupted redaction that saved a rechain plan: until all
 * its files are written the hashes disagree and the store cannot be loaded.
 * Returns the fingerprints whose plan was (re)applied.
 */
export function finishSavedRechains(root: string): string[] {
  let pending: RedactionEntry[];
  try {
    pending = (readPolicyFile(root).redacted ?? []).filter((item) => item.status !== "done");
  } catch (error) {
    if (error instanceof BimriError) return [];
    throw error;
  }
  const finished: string[] = [];
  for (const item of pending) {
    const plan = readSavedPlan(join(root, item.backup, RECHAIN_PLAN));
    if (plan === null) continue;
    const paths = new StorePaths(root);
    const applied = withEngineLock(paths, () => {
      const due = pendingRechain(root, plan);
      for (const file of due) applyRechainFile(root, file);
      if (due.length > 0) {
        removeDerivedCopies(paths);
        invalidateAuditWitness(paths);
      }
      return due.length;
    });
    if (applied > 0) finished.push(item.fingerprint);
  }
  return finished;
}

/** Derived copies of record text (index, history digest), rebuilt from the rewritten records. */
function removeDerivedCopies(paths: Store["paths"]): void {
  for (const name of ["index.tsv", "audit-integrity-history.tsv", "audit-integrity-history.json"]) {
    try {
      Deno.removeSync(join(paths.dir, name));
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
}

function stamp(at: string): string {
  return at.replace(/[-:]/g, "").replace(/Z$/, "");
}

/**
 * Redacts the string with `fingerprintInput` from the store (under the
 * engine lock: `store` comes from withStore); `at` is the UTC timestamp.
 */
export function redactSecret(store: Store, fingerprintInput: string, at: string): RedactResult {
  const fingerprint = requireFingerprint(fingerprintInput);
  const { paths } = store;
  const root = paths.root;
  const policy = readPolicyFile(root);
  const previous = (policy.redacted ?? []).find((item) => item.fingerprint === fingerprint);
  const everything = { allowed: new Set<string>(), disabled: new Set<string>() };
  const found = scanStoreForSecrets(paths, everything, false, SHARE_SCANNED_FILES)
    .filter((hit) => hit.fingerprint === fingerprint);
  if (previous === undefined && found.length === 0) {
    throw new BimriError(
      "invalid-input",
      `no string with fingerprint ${fingerprint} is in this store; run \`bimri doctor\` for the ` +
        "fingerprints it finds.",
    );
  }
  const kind = previous?.kind ?? found[0].kind;
  const only = new Map([[fingerprint, kind]]);
  const files = [...new Set(found.map((hit) => hit.file))];

  const backup = previous?.backup ??
    `${BACKUP_FOLDER}/${stamp(at)}-${fingerprint.slice(0, 12)}`;
  // An unshared store's hash-bound records are rewritten together, every hash
  // that covered the old bytes recomputed (rechain.ts); the plan is kept in
  // the backup folder so an interrupted run applies the very same one.
  const planFile = join(root, backup, RECHAIN_PLAN);
  const rechain = (previous?.status === "done" ? null : readSavedPlan(planFile)) ??
    (!isShared(paths) && rechainCovers(files)
      ? planRechain(paths, only, store.state.entry_max_chars)
      : null);

  // What each rewritable file becomes; read once, before anything is written.
  const rewrites: Array<{ file: string; path: string; before: Uint8Array; after: string }> = [];
  for (const file of rechain === null ? files.filter((f) => LOG_FILE.test(f)) : []) {
    const path = join(root, file);
    const before = readBytesOrNull(path);
    if (before === null) continue;
    const text = new TextDecoder().decode(before);
    const after = redactText(text, only, (line) => FREE_LOG_LINE.test(line));
    if (after !== text) rewrites.push({ file, path, before, after });
  }

  // This clone's own share records git has not carried anywhere: rewritten too (unpushed_share.ts).
  const shareRewrites = planUnpushedShareRewrites(store, files, only);

  // 1. Backups outside memory, before any byte of memory changes.
  Deno.mkdirSync(join(root, backup), { recursive: true, mode: 0o700 });
  // git never picks the backups up (they hold the secret).
  const ignore = join(root, BACKUP_FOLDER, ".gitignore");
  if (readBytesOrNull(ignore) === null) atomicReplace(ignore, "*\n");
  for (const rewrite of [...rewrites, ...shareRewrites]) {
    const copy = join(root, backup, rewrite.file.replaceAll("/", "__"));
    if (readBytesOrNull(copy) === null) atomicReplace(copy, rewrite.before);
  }
  if (rechain !== null) {
    for (const { file } of rechain) {
      const copy = join(root, backup, file.replaceAll("/", "__"));
      const before = readBytesOrNull(join(root, file));
      if (before !== null && readBytesOrNull(copy) === null) atomicReplace(copy, before);
    }
    if (readBytesOrNull(planFile) === null) atomicReplace(planFile, JSON.stringify(rechain) + "\n");
  }
  faultPoint("redact-after-backup");

  // 2. The receipt, started: from here every output masks the secret.
  const entry: RedactionEntry = previous ?? {
    fingerprint,
    kind,
    redacted_at: at,
    status: "started",
    backup,
    rewritten: [],
    kept: [],
  };
  entry.status = "started";
  entry.rewritten = [
    ...new Set([
      ...entry.rewritten,
      ...[...rewrites, ...shareRewrites, ...(rechain ?? [])].map((r) => r.file),
    ]),
  ].sort();
  const others = (policy.redacted ?? []).filter((item) => item.fingerprint !== fingerprint);
  writePolicyFile(root, { ...policy, redacted: [...others, entry] });
  faultPoint("redact-after-receipt");

  // 3. Each rewrite, atomically.
  for (const rewrite of rewrites) {
    atomicReplace(rewrite.path, rewrite.after);
    faultPoint("redact-after-rewrite");
  }
  const rechained = rechain === null ? [] : pendingRechain(root, rechain);
  for (const item of rechained) {
    applyRechainFile(root, item);
    faultPoint("redact-after-rewrite");
  }
  if (rechained.length > 0) removeDerivedCopies(paths);
  if (rewrites.length > 0 || rechained.length > 0) invalidateAuditWitness(paths);
  for (const rewrite of shareRewrites) {
    applyShareRewrite(rewrite);
    faultPoint("redact-after-share-rewrite");
  }

  // 4. Current memory: one ordinary change per entry holding it, made by the
  // owner (this run is theirs, keyed by the fingerprint so a rerun resumes it),
  // so bimri.md and the head revision no longer hold it. Older revisions keep
  // their bytes, as the hash chain requires.
  const { keys, held } = rechain === null
    ? redactCurrentMemory(store, only, fingerprint)
    : { keys: [], held: 0 };

  // 5. Done: what was rewritten and what still holds the secret (masked on output).
  const remaining = scanStoreForSecrets(paths, everything, false, SHARE_SCANNED_FILES)
    .filter((hit) => hit.fingerprint === fingerprint);
  const keptFiles = [...new Set(remaining.map((hit) => hit.file))];
  entry.kept = keptFiles.map((file) => `${file}: ${whyKept(file)}`);
  entry.status = "done";
  writePolicyFile(root, { ...policy, redacted: [...others, entry] });
  atomicReplace(
    join(root, backup, "receipt.json"),
    JSON.stringify(
      { ...entry, note: "delete this folder once the credential is rotated" },
      null,
      2,
    ) +
      "\n",
  );
  return {
    entry,
    keys,
    held,
    shared: keptFiles.filter((file) => file.startsWith(".bimri-share/")),
  };
}

function redactCurrentMemory(
  store: Store,
  only: ReadonlyMap<string, string>,
  fingerprint: string,
): { keys: string[]; held: number } {
  const holding = store.head.view.entries.filter(({ entry }) =>
    redactText(entry.text, only) !== entry.text ||
    (entry.tier === 3 && redactText(entry.falsifier, only) !== entry.falsifier)
  );
  if (holding.length === 0) return { keys: [], held: 0 };
  const screen = textScreenOf(store.paths.root);
  const { run } = startRun(store, "owner", `secrets-redact-${fingerprint}`, screen);
  const keys: string[] = [];
  for (const { entry } of holding) {
    const rationale = `owner redaction of a credential, sha256:${fingerprint}`;
    if (entry.tier === 3) {
      propose(store, {
        run,
        key: entry.key,
        tier: "3",
        text: redactText(entry.text, only),
        falsifier: redactText(entry.falsifier, only),
        rationale,
      }, screen);
    } else {
      propose(store, {
        run,
        key: entry.key,
        text: redactText(entry.text, only),
        trust: entry.trust === "contested" ? "working" : entry.trust,
        // A confirmed entry stays confirmed: the owner attests this change
        // (--human-approved), and only their statement may carry that trust.
        source: entry.trust === "confirmed" && entry.source !== "system" ? "user" : entry.source,
        rationale,
      }, screen);
    }
    keys.push(entry.key);
  }
  faultPoint("redact-after-propose");
  const closed = closeRun(store, run, "success", "the owner redacted a credential from memory");
  return { keys, held: closed.memory.held };
}
