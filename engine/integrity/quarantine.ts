/**
 * Owner-governed authority repair (protocol 9.5, FORMATS 13.2/13.3):
 * `quarantine-authority` preserves a damaged record's exact evidence under its
 * content hash and puts a blocking stub in its place; `restore-authority`
 * validates a replacement in a shadow of the authority graph, writes a
 * human-asserted receipt, then replaces the stub. Both are idempotent: a
 * retry with the same artifacts reuses what exists and writes nothing new.
 */
import { resolve as resolvePath } from "node:path";
import { BimriError } from "../errors.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../model/json.ts";
import {
  atomicReplace,
  createExclusive,
  listNames,
  lstatOrNull,
  readBytesOrNull,
} from "../store/files.ts";
import { invalidateAuditWitness, type Store } from "../store/store.ts";
import { decodeUtf8Strict, sha256Hex, utf8 } from "../model/text.ts";
import { utcTimestamp } from "../model/time.ts";
import { idNumber, RUN_ID } from "../model/ids.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";
import { invalidChoice } from "../model/py_repr.ts";
import { type AuthorityFacts, collectFacts } from "./authority_facts.ts";
import { authorityIssues } from "./authority_graph.ts";
import {
  type AuthorityIssue,
  factsFromBytes,
  missingDecisionPrefix,
  QUARANTINED_PROBLEM,
  type RecordFacts,
} from "./everyday.ts";
import {
  AUTHORITY_KINDS,
  type AuthorityKind,
  evidenceRelPath,
  idGrammar,
  isStub,
  KIND_FOLDER,
  RECEIPT_TYPE,
  receiptProblems,
  recordProblems,
  recordRelPath,
  STUB_TYPE,
  stubProblems,
} from "./schemas.ts";
import { preserveEvidenceBytes } from "./manual_edit.ts";
import { readCandidate, readConflict } from "../records/conflict.ts";
import { chosenEffectAtHead } from "../records/answer_proof.ts";
import { auditStore } from "./doctor.ts";
import { AUTHORITY_RECOVERY_NEEDED } from "./doctor_authority.ts";

/** Validates `--kind` and `--id`. */
export function requireKindAndId(kind: string, id: string): AuthorityKind {
  if (!(AUTHORITY_KINDS as readonly string[]).includes(kind)) {
    throw new BimriError(
      "usage",
      `${invalidChoice("kind", kind, AUTHORITY_KINDS)}.`,
    );
  }
  const k = kind as AuthorityKind;
  if (!idGrammar(k).test(id)) {
    throw new BimriError("invalid-input", `invalid ${k} ID: ${id}`);
  }
  return k;
}

function requireApproval(approved: boolean, verb: string): void {
  if (!approved) {
    throw new BimriError(
      "refused",
      `${verb} changes shared authority and needs the owner's explicit approval: ask the owner, then repeat with --human-approved.`,
    );
  }
}

function recordPath(store: Store, kind: AuthorityKind, id: string): string {
  return `${store.paths.folder(KIND_FOLDER[kind])}/${id}.json`;
}

function readObject(path: string): JsonObject | null {
  const info = lstatOrNull(path);
  if (!info?.isFile || info.isSymlink) return null;
  const bytes = readBytesOrNull(path);
  const text = bytes === null ? null : decodeUtf8Strict(bytes);
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as JsonValue;
    return isJsonObject(value) ? value : null;
  } catch {
    return null;
  }
}

/** True when an issue concerns `kind`/`id` directly or names `id` in its problem. */
function concerns(issue: AuthorityIssue, kind: AuthorityKind, id: string): boolean {
  if (issue.kind === kind && issue.id === id) return true;
  return new RegExp(`(^|[^A-Z0-9-])${id}([^A-Z0-9-]|$)`).test(issue.problem);
}

/**
 * A reference engine that quarantined this record latched its writes with
 * `.bimri/audit-blocked.json`; its own restore clears that marker once the
 * graph validates. bimri restored and validated the graph, so it clears the
 * derived marker too, or the reference would keep refusing writes.
 */
function clearReferenceAuditBlock(store: Store): void {
  try {
    Deno.removeSync(store.paths.folder("audit-blocked.json"));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/** Whether the full doctor audit reports an error naming this record. */
function auditFlags(store: Store, kind: AuthorityKind, id: string): boolean {
  const named = new RegExp(`(^|[^A-Za-z0-9-])${kind} ${id}([^A-Z0-9-]|$)`);
  return auditStore(store.paths).errors.some((error) => named.test(error));
}

/** Durable evidence that anchors a missing record's kind and ID (protocol 12). */
function isAnchored(store: Store, kind: AuthorityKind, id: string): boolean {
  const facts = collectFacts(store.paths, null);
  if (kind === "conflict") {
    if (idNumber(id) <= store.state.conflict_count) return true;
    for (const d of facts.records.decision.values()) if (d.conflictId === id) return true;
    return facts.records.resolution.has(id);
  }
  if (kind === "resolution") {
    const dir = store.paths.folder("decisions");
    for (const name of listNames(dir)) {
      const d = readObject(`${dir}/${name}`);
      if (d && d.resolution_id === id) return true;
    }
    return answerProvenAtHead(store, id);
  }
  // Proposals and decisions: the run log's [PROPOSE:] marker, or a dependent record.
  const run = id.slice(0, 7);
  if (RUN_ID.test(run)) {
    const log = facts.logs.get(run);
    if (log?.markers.includes(id)) return true;
  }
  if (kind === "proposal" && facts.records.decision.has(id)) return true;
  // A decision the graph requires: its proposal's run synced past it or closed
  // (for a proposal its log never named, the marker above cannot anchor it).
  if (
    kind === "decision" &&
    authorityIssues(store.state, facts).some((i) =>
      i.kind === "decision" && i.id === id && i.problem.startsWith(missingDecisionPrefix(id))
    )
  ) {
    return true;
  }
  for (const c of facts.records.conflict.values()) {
    if ((c.proposalIds ?? []).includes(id)) return true;
  }
  return false;
}

/**
 * The reference's other evidence that an answer existed, for when its record
 * and the finalized decision are both gone: the conflict is there and the
 * head carries one candidate's effect (only an owner's choice commits it).
 */
function answerProvenAtHead(store: Store, id: string): boolean {
  try {
    const conflict = readConflict(store, id);
    if (conflict === null) return false;
    return conflict.proposal_ids.some((candidate) =>
      chosenEffectAtHead(store, conflict, readCandidate(store, candidate))
    );
  } catch (error) {
    // A conflict or candidate that cannot be read proves nothing.
    if (error instanceof BimriError) return false;
    throw error;
  }
}

/** What quarantine did. */
export type QuarantineResult = {
  kind: AuthorityKind;
  id: string;
  originalType: "file" | "missing" | "symbolic-link";
  evidence: string;
  stub: string;
  alreadyQuarantined: boolean;
};

function stubFor(
  kind: AuthorityKind,
  id: string,
  originalType: string,
  sha: string,
): JsonObject {
  return {
    authority: "human-asserted",
    bimri_version: AUTHORITY_FORMAT,
    original_path: recordRelPath(kind, id),
    original_type: originalType,
    quarantine_schema: 1,
    quarantined_at: utcTimestamp(),
    record_id: id,
    record_kind: kind,
    record_type: STUB_TYPE,
    recovery_file: evidenceRelPath(kind, id, sha),
    sha256: sha,
    status: "quarantined",
  };
}

/** Quarantines a damaged, unsafe or anchored-missing record (must run under the engine lock). */
export function quarantineAuthority(
  store: Store,
  kindInput: string,
  id: string,
  approved: boolean,
): QuarantineResult {
  const kind = requireKindAndId(kindInput, id);
  requireApproval(approved, "quarantine-authority");
  const path = recordPath(store, kind, id);
  const relative = recordRelPath(kind, id);
  const info = lstatOrNull(path);
  let evidenceBytes: Uint8Array;
  let originalType: "file" | "missing" | "symbolic-link";
  if (info === null) {
    if (!isAnchored(store, kind, id)) {
      throw new BimriError(
        "refused",
        `${relative} does not exist and ${kind} ${id} has no durable BIMRI reference (no run log, dependent record or conflict counter refers to it); nothing was quarantined. Check the kind and ID.`,
      );
    }
    originalType = "missing";
    evidenceBytes = utf8(canonicalJson({
      evidence_type: "missing-authority-record",
      original_path: relative,
    }));
  } else if (info.isSymlink) {
    const target = Deno.readLinkSync(path);
    originalType = "symbolic-link";
    evidenceBytes = utf8(canonicalJson({
      evidence_type: "symbolic-link",
      link_target: target,
      link_target_bytes_hex: Array.from(utf8(target), (b) => b.toString(16).padStart(2, "0")).join(
        "",
      ),
      original_path: relative,
    }));
  } else if (info.isFile) {
    const bytes = readBytesOrNull(path) ?? new Uint8Array();
    const current = readObject(path);
    if (current && isStub(current) && stubProblems(current, kind, id).length === 0) {
      return {
        kind,
        id,
        originalType: current.original_type as QuarantineResult["originalType"],
        evidence: current.recovery_file as string,
        stub: relative,
        alreadyQuarantined: true,
      };
    }
    const issues = authorityIssues(store.state, collectFacts(store.paths, null));
    // The graph check sees structure only; a record can be well-formed yet
    // semantically damaged (a decision naming a revision beyond the head).
    // The reference quarantines anything its full record validation rejects,
    // so fall back to the full audit before calling the record valid.
    if (!issues.some((i) => concerns(i, kind, id)) && !auditFlags(store, kind, id)) {
      throw new BimriError(
        "refused",
        `${kind} ${id} is valid; quarantine is only for damaged authority records. Nothing was changed.`,
      );
    }
    originalType = "file";
    evidenceBytes = bytes;
  } else {
    throw new BimriError(
      "refused",
      `${relative} is neither a file nor a symbolic link; move it aside by hand, then quarantine the missing record.`,
    );
  }
  const sha = sha256Hex(evidenceBytes);
  const evidence = preserveEvidenceBytes(
    store,
    `authority-${kind}-${id}-${sha}.json`,
    evidenceBytes,
  );
  const stub = canonicalJson(stubFor(kind, id, originalType, sha));
  if (originalType === "missing") {
    if (!createExclusive(path, stub)) {
      throw new BimriError(
        "refused",
        `${relative} appeared while quarantining; run doctor and retry.`,
      );
    }
  } else {
    // A rename replaces a symbolic link entry itself; its target is never touched.
    atomicReplace(path, stub);
  }
  invalidateAuditWitness(store.paths);
  return { kind, id, originalType, evidence, stub: relative, alreadyQuarantined: false };
}

/** What restore did. */
export type RestoreResult = {
  kind: AuthorityKind;
  id: string;
  receipt: string;
  replacementSha256: string;
  alreadyRestored: boolean;
  /** Other quarantine stubs or damage still pause canonical writes. */
  staged: boolean;
  remainingIssues: AuthorityIssue[];
};

function receiptName(
  kind: AuthorityKind,
  id: string,
  original: string,
  replacement: string,
): string {
  return `authority-restore-${kind}-${id}-${original}-${replacement}.json`;
}

function findReceipt(
  store: Store,
  kind: AuthorityKind,
  id: string,
  replacement: string,
): string | null {
  const prefix = `authority-restore-${kind}-${id}-`;
  for (const name of listNames(store.paths.folder("recovery"))) {
    if (name.startsWith(prefix) && name.endsWith(`-${replacement}.json`)) return name;
  }
  return null;
}

/** An audit error about one authority record opens with its kind and ID. */
const RECORD_ERROR = new RegExp(
  `^(?:${AUTHORITY_RECOVERY_NEEDED})?(proposal|decision|conflict|resolution) ([A-Z0-9-]+)[ :(]`,
);

/**
 * Records the audit still finds damaged rather than quarantined. Protocol 9.5
 * lets a restore stage only while a recognized stub blocks full dependency
 * validation; any other remaining authority error means the graph the owner
 * reviewed is not the one the replacement would join. Errors that are not
 * about an authority record (evidence, index, hot memory) are left to doctor:
 * they do not decide whether this record may come back.
 */
function damagedRecords(errors: string[], facts: AuthorityFacts): string[] {
  const damaged = new Map<string, string>();
  for (const error of errors) {
    const match = RECORD_ERROR.exec(error);
    if (!match) continue;
    const [, kind, id] = match;
    const f = facts.records[kind as AuthorityKind].get(id);
    if (f?.stub && f.problem === QUARANTINED_PROBLEM) continue;
    const key = `${kind} ${id}`;
    const line = error.startsWith(AUTHORITY_RECOVERY_NEEDED)
      ? error.slice(AUTHORITY_RECOVERY_NEEDED.length)
      : error;
    if (!damaged.has(key)) damaged.set(key, line);
  }
  return [...damaged.values()];
}

/**
 * Refuses a restore (or the retry of one already done, `retry`) while records
 * other than stubs are still damaged.
 */
function refuseUnlessOnlyQuarantined(
  errors: string[],
  facts: AuthorityFacts,
  kind: AuthorityKind,
  id: string,
  retry = false,
): void {
  const damaged = damagedRecords(errors, facts);
  if (damaged.length === 0) return;
  const first = RECORD_ERROR.exec(damaged[0])!;
  const shown = damaged.slice(0, 3).map((e) => `  - ${e}`).join("\n");
  const more = damaged.length > 3 ? `\n  (and ${damaged.length - 3} more; run doctor)` : "";
  const outcome = retry
    ? `${kind} ${id} is already restored, but the restore cannot be confirmed`
    : `${kind} ${id} was not restored`;
  throw new BimriError(
    "refused",
    `${outcome}: with the replacement in place, other authority records are still damaged, and a restore may only be staged while the remaining records are quarantined:\n${shown}${more}\nWith the owner's approval, quarantine or repair them first (for example quarantine-authority --kind ${
      first[1]
    } --id ${first[2]} --human-approved), then repeat this restore. Nothing was written.`,
  );
}

/**
 * Reads the reviewed replacement. Only a regular file is accepted: a symbolic
 * link could point anywhere (or be re-pointed between review and restore), so
 * the bytes restored might not be the ones the owner reviewed.
 */
function readReplacement(fromFile: string): Uint8Array {
  const sourcePath = resolvePath(Deno.cwd(), fromFile);
  const before = lstatOrNull(sourcePath);
  if (before === null) {
    throw new BimriError(
      "invalid-input",
      `the replacement file ${fromFile} does not exist; pass the path of the reviewed record. Nothing was written.`,
    );
  }
  if (before.isSymlink || !before.isFile) {
    const what = before.isSymlink ? "a symbolic link" : "not a regular file";
    throw new BimriError(
      "invalid-input",
      `the replacement file ${fromFile} is ${what}; restore-authority reads only a regular file, so copy the reviewed record into one and pass that path. Nothing was written.`,
    );
  }
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(sourcePath);
  } catch {
    throw new BimriError(
      "invalid-input",
      `cannot read the replacement file ${fromFile}; check its permissions. Nothing was written.`,
    );
  }
  // The path may have been swapped for a link while it was read.
  const after = lstatOrNull(sourcePath);
  if (!after || after.isSymlink || !after.isFile || after.ino !== before.ino) {
    throw new BimriError(
      "invalid-input",
      `the replacement file ${fromFile} changed while it was read; make sure nothing else writes it, then retry. Nothing was written.`,
    );
  }
  return bytes;
}

/** Semantic bounds a replacement must satisfy beyond its schema. */
function boundProblems(store: Store, kind: AuthorityKind, value: JsonObject): string[] {
  const head = store.state.head_revision;
  const out: string[] = [];
  const over = (field: string, limit = head) => {
    const v = value[field];
    if (typeof v === "number" && v > limit) out.push(`${field} ${v} is beyond the head`);
  };
  if (kind === "proposal") over("base_revision");
  if (kind === "decision") {
    over("revision");
    over("revision_before");
    const proposal = readObject(recordPath(store, "proposal", value.proposal_id as string));
    if (
      proposal && !isStub(proposal) && typeof value.revision === "number" &&
      typeof proposal.base_revision === "number" && value.revision < proposal.base_revision
    ) {
      out.push("revision precedes the proposal's base");
    }
  }
  if (kind === "resolution") {
    over("revision_before");
    over("revision_after");
    over("intended_revision_after", head + 1);
  }
  return out;
}

/** Restores a quarantined record from a reviewed replacement (must run under the engine lock). */
export function restoreAuthority(
  store: Store,
  kindInput: string,
  id: string,
  fromFile: string,
  approved: boolean,
): RestoreResult {
  const kind = requireKindAndId(kindInput, id);
  requireApproval(approved, "restore-authority");
  const sourceBytes = readReplacement(fromFile);
  const sourceText = decodeUtf8Strict(sourceBytes);
  let parsed: JsonValue;
  try {
    if (sourceText === null) throw new Error("not UTF-8");
    parsed = JSON.parse(sourceText) as JsonValue;
  } catch {
    throw new BimriError("invalid-input", `${fromFile} is not valid JSON; nothing was restored.`);
  }
  if (!isJsonObject(parsed) || isStub(parsed)) {
    throw new BimriError(
      "invalid-input",
      `${fromFile} is not a ${kind} record; nothing was restored.`,
    );
  }
  const canonical = canonicalJson(parsed);
  const canonicalBytes = utf8(canonical);
  const replacementSha = sha256Hex(canonicalBytes);
  const path = recordPath(store, kind, id);
  const relative = recordRelPath(kind, id);
  const info = lstatOrNull(path);
  const current = readObject(path);
  const issuesAfter = () => authorityIssues(store.state, collectFacts(store.paths, null));

  if (!current || !isStub(current)) {
    const existing = info?.isFile && !info.isSymlink ? readBytesOrNull(path) : null;
    const receipt = findReceipt(store, kind, id, replacementSha);
    if (existing !== null && sha256Hex(existing) === replacementSha && receipt) {
      // A retry answers as the first restore would now: still only stubs may remain.
      refuseUnlessOnlyQuarantined(
        auditStore(store.paths).errors,
        collectFacts(store.paths, null),
        kind,
        id,
        true,
      );
      const remaining = issuesAfter();
      return {
        kind,
        id,
        receipt: `.bimri/recovery/${receipt}`,
        replacementSha256: replacementSha,
        alreadyRestored: true,
        staged: remaining.length > 0,
        remainingIssues: remaining,
      };
    }
    throw new BimriError(
      "refused",
      `${relative} is not quarantined; quarantine it first with quarantine-authority --kind ${kind} --id ${id} --human-approved.`,
    );
  }
  const stubIssues = stubProblems(current, kind, id);
  if (stubIssues.length > 0) {
    throw new BimriError(
      "store-corrupt",
      `the quarantine stub at ${relative} is invalid (${stubIssues[0]}); run doctor.`,
    );
  }
  const original = current.sha256 as string;
  const evidencePath = store.paths.recovery(`authority-${kind}-${id}-${original}.json`);
  const evidence = readBytesOrNull(evidencePath);
  if (evidence === null || sha256Hex(evidence) !== original) {
    throw new BimriError(
      "store-corrupt",
      `the quarantine evidence ${current.recovery_file} is missing or altered; restore is refused until it is back (run doctor).`,
    );
  }
  // Intrinsic schema, then the replacement's place in a shadow of the authority graph.
  const problems = [...recordProblems(kind, parsed, id), ...boundProblems(store, kind, parsed)];
  if (problems.length > 0) {
    throw new BimriError(
      "refused",
      `the replacement ${kind} ${id} is not valid (${
        problems.join("; ")
      }); it stays behind its quarantine stub and no receipt was written.`,
    );
  }
  const facts = collectFacts(store.paths, null);
  const shadow: RecordFacts = factsFromBytes(canonicalBytes, kind, id);
  facts.records[kind].set(id, shadow);
  const shadowIssues = authorityIssues(store.state, facts);
  const blocking = shadowIssues.filter((i) => concerns(i, kind, id));
  if (blocking.length > 0) {
    throw new BimriError(
      "refused",
      `the ${kind} ${id} replacement fails authority-graph validation (${
        blocking[0].problem
      }); it stays behind its quarantine stub and no receipt was written.`,
    );
  }
  // The complete audit (revision bounds, effects, base snapshots) with the replacement in place.
  const shadowAudit = auditStore(store.paths, { kind, id, bytes: canonicalBytes });
  const auditBlocking = shadowAudit.errors.filter((e) =>
    new RegExp(`(^|[^A-Z0-9-])${id}([^A-Z0-9-]|$)`).test(e) &&
    !/quarantine stub|is quarantined/.test(e)
  );
  if (auditBlocking.length > 0) {
    throw new BimriError(
      "refused",
      `the ${kind} ${id} replacement fails the audit (${
        auditBlocking[0]
      }); it stays behind its quarantine stub and no receipt was written.`,
    );
  }
  refuseUnlessOnlyQuarantined(shadowAudit.errors, facts, kind, id);
  const name = receiptName(kind, id, original, replacementSha);
  const receiptPath = store.paths.recovery(name);
  const existingReceipt = readObject(receiptPath);
  if (existingReceipt) {
    if (receiptProblems(existingReceipt, kind, id, original, replacementSha).length > 0) {
      throw new BimriError(
        "store-corrupt",
        `.bimri/recovery/${name} exists but is not a valid receipt; run doctor.`,
      );
    }
  } else {
    const receipt: JsonObject = {
      authority: "human-asserted",
      authorized_at: utcTimestamp(),
      bimri_version: AUTHORITY_FORMAT,
      original_sha256: original,
      record_id: id,
      record_kind: kind,
      record_type: RECEIPT_TYPE,
      recovery_file: evidenceRelPath(kind, id, original),
      replacement_sha256: replacementSha,
      restore_schema: 1,
      status: "authorized-restore",
      target_path: relative,
    };
    if (!createExclusive(receiptPath, canonicalJson(receipt))) {
      throw new BimriError("refused", `.bimri/recovery/${name} appeared concurrently; retry.`);
    }
  }
  atomicReplace(path, canonicalBytes);
  invalidateAuditWitness(store.paths);
  const remaining = issuesAfter();
  if (remaining.length === 0) clearReferenceAuditBlock(store);
  return {
    kind,
    id,
    receipt: `.bimri/recovery/${name}`,
    replacementSha256: replacementSha,
    alreadyRestored: false,
    staged: remaining.length > 0,
    remainingIssues: remaining,
  };
}
