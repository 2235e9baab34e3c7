/**
 * Intrinsic validation of the four authority record kinds (proposal,
 * decision, conflict, resolution), of quarantine stubs and of restore
 * receipts, with version-aware rules: frozen v5.0-v5.0.2 artifacts are
 * checked against their own, smaller contract; v5.1.0 records against the
 * complete one. "Intrinsic" means: only the record's own bytes and its file
 * name are consulted; graph and effect checks live in authority.ts/doctor.ts.
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../model/json.ts";
import { CONFLICT_ID, ENTRY_ID, KEY, PATTERN_ID, PROPOSAL_ID, RUN_ID, TAG } from "../model/ids.ts";
import { hasLineBreakOrControl, lineHash } from "../model/text.ts";
import { TIMESTAMP } from "../model/time.ts";
import { ACCEPTED_RECEIPT_RELEASES, AUTHORITY_FORMAT } from "../versions.ts";

/** The four authority record kinds, as the `--kind` flag names them. */
export const AUTHORITY_KINDS = ["proposal", "decision", "conflict", "resolution"] as const;
/** One authority record kind. */
export type AuthorityKind = typeof AUTHORITY_KINDS[number];

/** Folder under `.bimri/` holding each kind. */
export const KIND_FOLDER: Record<AuthorityKind, string> = {
  proposal: "proposals",
  decision: "decisions",
  conflict: "conflicts",
  resolution: "resolutions",
};

/** Record versions a reader accepts: frozen v5.0-v5.0.2 artifacts and the current format. */
export const RECORD_VERSIONS: readonly string[] = ["5.0", "5.0.1", "5.0.2", AUTHORITY_FORMAT];

/** Hold reasons a held decision may carry. */
export const HOLD_REASONS: readonly string[] = [
  "classification-required",
  "tier1-human-authority-required",
  "confirmed-user-authority-required",
  "owner-resolution-in-progress",
  "capacity-residency-required",
];

/** Deterministic no-op reasons. */
export const NOOP_REASONS: readonly string[] = [
  "current memory already matches",
  "memory already absent",
  "proposal produced no memory change",
];

/** Conflict types a reader accepts (the last four are historical only). */
export const CONFLICT_TYPES: readonly string[] = [
  "stale-base",
  "manual-edit",
  "agent-declared",
  "approval",
  "capacity-or-validation",
  "confirmed-change",
];

/** The ID grammar of a record kind. */
export function idGrammar(kind: AuthorityKind): RegExp {
  return kind === "proposal" || kind === "decision" ? PROPOSAL_ID : CONFLICT_ID;
}

const HEX64 = /^[0-9a-f]{64}$/;
const DATE_ONLY = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

/** True when the record is at least format 5.1.0 (complete v5.1 contract). */
export function isV51(value: JsonObject): boolean {
  return value.bimri_version === AUTHORITY_FORMAT;
}

/** True for a v5.0.2-or-later record (authority attestation required on resolutions). */
function isV502OrLater(value: JsonObject): boolean {
  return value.bimri_version === "5.0.2" || value.bimri_version === AUTHORITY_FORMAT;
}

function isInt(v: JsonValue | undefined, min = 0): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= min;
}

function isTimestamp(v: JsonValue | undefined): v is string {
  return typeof v === "string" && TIMESTAMP.test(v);
}

function isHashOrAbsent(v: JsonValue | undefined): boolean {
  return typeof v === "string" && (v === "absent" || HEX64.test(v));
}

function isOneLine(v: JsonValue | undefined, max: number): v is string {
  return typeof v === "string" && [...v].length <= max && !hasLineBreakOrControl(v);
}

function isStringArray(v: JsonValue | undefined): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === "string");
}

/** Collects problems for one record; each check adds a short reason. */
class Problems {
  readonly list: string[] = [];
  need(ok: boolean, problem: string): void {
    if (!ok) this.list.push(problem);
  }
}

function checkVersionAndId(
  p: Problems,
  value: JsonObject,
  kind: AuthorityKind,
  id: string,
): void {
  const idField = kind === "decision" || kind === "proposal" ? "proposal_id" : "conflict_id";
  // The reference's wording ("resolution BIMRI version ..."), which scripts look for.
  p.need(
    typeof value.bimri_version === "string" && RECORD_VERSIONS.includes(value.bimri_version),
    `unsupported ${kind} BIMRI version ${JSON.stringify(value.bimri_version ?? null)}`,
  );
  // "invalid proposal ID" (conflict, ...): the reference's words for an ID that is not the file's.
  p.need(
    value[idField] === id,
    `invalid ${idField.replace(/_id$/, "")} ID ${
      JSON.stringify(value[idField] ?? null)
    }: ${idField} does not match the file name`,
  );
}

/** Fields every v5.1.0 proposal carries (33). */
const PROPOSAL_FIELDS_V51 = [
  "actor",
  "base_archive_proposal_id",
  "base_hash",
  "base_revision",
  "base_storage",
  "bimri_version",
  "confidence",
  "created_at",
  "entry_id",
  "evidence",
  "falsifier",
  "first_run",
  "hold_reason",
  "importance",
  "key",
  "kind",
  "needs_human",
  "new_subject",
  "observations",
  "operation",
  "pattern_id",
  "preflight_receipt",
  "proposal_id",
  "question",
  "rationale",
  "run_id",
  "source",
  "status",
  "tags",
  "target_id",
  "text",
  "tier",
  "trust",
];

/** Fields a frozen v5.0-v5.0.2 proposal must carry. */
const PROPOSAL_FIELDS_V50 = [
  "base_hash",
  "base_revision",
  "bimri_version",
  "created_at",
  "key",
  "operation",
  "proposal_id",
  "run_id",
  "text",
  "tier",
];

/** Problems of a proposal record named `id` (empty when intrinsically valid). */
export function proposalProblems(value: JsonObject, id: string): string[] {
  const p = new Problems();
  checkVersionAndId(p, value, "proposal", id);
  const v51 = isV51(value);
  const required = v51 ? PROPOSAL_FIELDS_V51 : PROPOSAL_FIELDS_V50;
  for (const field of required) {
    // A receiptless proposal is readable authority (the reference keeps
    // consuming it); only its stale path refuses, in the commit.
    if (field !== "preflight_receipt") p.need(field in value, `missing field ${field}`);
  }
  if (v51) {
    for (const field of Object.keys(value)) {
      p.need(PROPOSAL_FIELDS_V51.includes(field), `unexpected field ${field}`);
    }
  }
  p.need(typeof value.run_id === "string" && RUN_ID.test(value.run_id), "invalid run_id");
  p.need(
    typeof value.run_id === "string" && id.startsWith(`${value.run_id}-Q`),
    "run_id does not match the proposal ID",
  );
  p.need(isTimestamp(value.created_at), "invalid created_at");
  p.need(["set", "touch", "close"].includes(value.operation as string), "invalid operation");
  p.need([1, 2, 3].includes(value.tier as number), "invalid tier");
  p.need(
    typeof value.key === "string" && KEY.test(value.key) && value.key.length <= 80,
    "invalid key",
  );
  p.need(isInt(value.base_revision), "invalid base_revision");
  p.need(isHashOrAbsent(value.base_hash), "invalid base_hash");
  p.need(typeof value.text === "string" && !hasLineBreakOrControl(value.text), "invalid text");
  if ("entry_id" in value) {
    p.need(typeof value.entry_id === "string" && ENTRY_ID.test(value.entry_id), "invalid entry_id");
  }
  if ("actor" in value) p.need(typeof value.actor === "string", "invalid actor");
  if ("importance" in value) {
    p.need(isInt(value.importance, 1) && (value.importance as number) <= 5, "invalid importance");
  }
  if ("kind" in value) {
    p.need(["decision", "fact", "pref", "rule"].includes(value.kind as string), "invalid kind");
  }
  if ("status" in value) {
    p.need(["active", "watch", "closed"].includes(value.status as string), "invalid status");
  }
  if ("trust" in value) {
    p.need(["working", "confirmed"].includes(value.trust as string), "invalid trust");
  }
  if ("source" in value) {
    p.need(
      ["user", "agent", "external", "system"].includes(value.source as string),
      "invalid source",
    );
  }
  if ("tags" in value) {
    p.need(
      isStringArray(value.tags) && value.tags.length <= 12 && value.tags.every((t) => TAG.test(t)),
      "invalid tags",
    );
  }
  if ("rationale" in value) p.need(isOneLine(value.rationale, 4000), "invalid rationale");
  if ("question" in value) p.need(isOneLine(value.question, 1000), "invalid question");
  if ("needs_human" in value) p.need(value.needs_human === false, "needs_human must be false");
  if ("confidence" in value) {
    p.need(
      ["emerging", "developing", "established"].includes(value.confidence as string),
      "invalid confidence",
    );
  }
  if ("observations" in value) p.need(isInt(value.observations, 1), "invalid observations");
  if ("evidence" in value) {
    p.need(isStringArray(value.evidence) && value.evidence.length <= 24, "invalid evidence");
  }
  if ("falsifier" in value) p.need(isOneLine(value.falsifier, 500), "invalid falsifier");
  if ("pattern_id" in value) {
    p.need(
      value.pattern_id === null ||
        (typeof value.pattern_id === "string" && PATTERN_ID.test(value.pattern_id)),
      "invalid pattern_id",
    );
  }
  if ("target_id" in value) {
    p.need(value.target_id === null || typeof value.target_id === "string", "invalid target_id");
  }
  if ("first_run" in value) {
    p.need(
      typeof value.first_run === "string" && /^R[0-9]+$/.test(value.first_run),
      "invalid first_run",
    );
  }
  if (v51) {
    p.need(typeof value.new_subject === "boolean", "invalid new_subject");
    p.need(
      ["absent", "hot", "cold"].includes(value.base_storage as string),
      "invalid base_storage",
    );
    p.need(
      (value.base_storage === "absent") === (value.base_hash === "absent"),
      "base_storage and base_hash disagree",
    );
    p.need(
      value.base_storage === "cold"
        ? typeof value.base_archive_proposal_id === "string" &&
          PROPOSAL_ID.test(value.base_archive_proposal_id)
        : value.base_archive_proposal_id === null,
      "invalid base_archive_proposal_id",
    );
    p.need(
      value.hold_reason === null || HOLD_REASONS.includes(value.hold_reason as string),
      "invalid hold_reason",
    );
    const receipt = value.preflight_receipt;
    if (!("preflight_receipt" in value)) {
      // No receipt: consumed as a legacy proposal (see above).
    } else if (!isJsonObject(receipt)) p.need(false, "invalid preflight_receipt");
    else {
      const keys = Object.keys(receipt).sort().join(",");
      p.need(
        keys === "engine_release,observed_head_hash,observed_head_revision,observed_key_hash",
        "preflight_receipt must have exactly its four fields",
      );
      p.need(
        ACCEPTED_RECEIPT_RELEASES.includes(receipt.engine_release as string),
        "preflight receipt engine release is invalid",
      );
      p.need(
        receipt.observed_head_revision === value.base_revision,
        "proposal preflight revision does not match proposal base revision",
      );
      p.need(
        receipt.observed_key_hash === value.base_hash,
        "proposal preflight key hash does not match proposal base hash",
      );
      p.need(
        typeof receipt.observed_head_hash === "string" && HEX64.test(receipt.observed_head_hash),
        "preflight_receipt has an invalid observed_head_hash",
      );
    }
  }
  return p.list;
}

/** Problems of a decision record named `id`. */
export function decisionProblems(value: JsonObject, id: string): string[] {
  const p = new Problems();
  checkVersionAndId(p, value, "decision", id);
  p.need(isTimestamp(value.recorded_at), "invalid recorded_at");
  const outcome = value.outcome;
  // A contested decision may keep initial_outcome from a finalization cut
  // short (the reference's resolve retries it); it is still contested.
  const resolved = "resolution_id" in value ||
    ("initial_outcome" in value && outcome !== "contested");
  if (outcome === "contested" && "initial_outcome" in value) {
    p.need(value.initial_outcome === "contested", "invalid initial_outcome");
  }
  switch (outcome) {
    case "applying":
      p.need(isHashOrAbsent(value.base_hash), "applying decision needs base_hash");
      p.need(isInt(value.revision_before), "applying decision needs revision_before");
      if (isV51(value)) {
        p.need(
          ["absent", "hot", "cold"].includes(value.base_storage as string),
          "invalid base_storage",
        );
        p.need(
          value.base_line === null || typeof value.base_line === "string",
          "invalid base_line",
        );
        p.need(
          lineHash((value.base_line as string | null) ?? null) === value.base_hash,
          "base_line does not match base_hash",
        );
      }
      break;
    case "accepted":
    case "noop":
    case "held":
    case "contested":
      p.need(isInt(value.revision), `${outcome} decision revision is missing or invalid`);
      break;
    default:
      p.need(false, `invalid outcome ${JSON.stringify(outcome ?? null)}`);
  }
  if (outcome === "contested" || resolved) {
    p.need(
      typeof value.conflict_id === "string" && CONFLICT_ID.test(value.conflict_id),
      "contested decision needs conflict_id",
    );
  }
  if (resolved) {
    p.need(value.initial_outcome === "contested", "invalid initial_outcome");
    p.need(value.resolution_id === value.conflict_id, "resolution_id must equal conflict_id");
    p.need(typeof value.resolution_choice === "string", "invalid resolution_choice");
    p.need(isTimestamp(value.resolved_at), "invalid resolved_at");
    p.need(
      outcome === "accepted" || outcome === "noop",
      "a resolved decision must be accepted or noop",
    );
  } else if (outcome === "noop") {
    p.need(
      NOOP_REASONS.includes(value.reason as string),
      "noop decision needs a deterministic reason",
    );
    if ("effect_hash" in value || isV51(value)) {
      p.need(
        value.effect_line === null || typeof value.effect_line === "string",
        "invalid effect_line",
      );
      p.need(
        lineHash((value.effect_line as string | null | undefined) ?? null) === value.effect_hash,
        "effect_line does not match effect_hash",
      );
    }
  } else if (outcome === "held") {
    p.need(HOLD_REASONS.includes(value.reason as string), "held decision needs a hold reason");
  }
  if ("recovered_from_intent" in value) {
    p.need(
      value.recovered_from_intent === true && outcome === "accepted",
      "invalid recovered_from_intent",
    );
  }
  return p.list;
}

/** Problems of a conflict record named `id`. */
export function conflictProblems(value: JsonObject, id: string): string[] {
  const p = new Problems();
  checkVersionAndId(p, value, "conflict", id);
  p.need(CONFLICT_TYPES.includes(value.type as string), "invalid type");
  p.need(typeof value.key === "string" && KEY.test(value.key), "invalid key");
  p.need(isTimestamp(value.created_at), "invalid created_at");
  p.need(isOneLine(value.question, 1000), "invalid question");
  const ids = value.proposal_ids;
  const idsOk = isStringArray(ids) && ids.every((x) => PROPOSAL_ID.test(x)) &&
    new Set(ids).size === ids.length;
  p.need(idsOk, "proposal_ids must be unique proposal IDs");
  const hashes = value.proposal_hashes;
  if (!isJsonObject(hashes)) p.need(false, "invalid proposal_hashes");
  else if (idsOk) {
    p.need(
      Object.keys(hashes).sort().join(",") === [...(ids as string[])].sort().join(","),
      "proposal_hashes does not match proposal_ids",
    );
    p.need(
      Object.values(hashes).every((h) => typeof h === "string" && HEX64.test(h)),
      "invalid candidate hash",
    );
  }
  const line = value.current_line;
  p.need(line === null || typeof line === "string", "invalid current_line");
  p.need(
    (line === null || typeof line === "string") && lineHash(line) === value.current_hash,
    "current_line does not match current_hash",
  );
  if (value.type === "manual-edit") {
    p.need(idsOk && (ids as string[]).length === 0, "a manual-edit conflict has no candidates");
    const extra = value.extra;
    if (isV51(value) || extra !== undefined) {
      const files = isJsonObject(extra) ? extra.recovery_files : undefined;
      const ok = isJsonObject(extra) && isStringArray(files) && files.length > 0 &&
        extra.recovery_file === files[0] &&
        files.every((f) => /^\.bimri\/recovery\/manual-hot-[0-9a-f]{64}\.(md|bin)$/.test(f)) &&
        [...files].sort().join("\n") === files.join("\n");
      p.need(ok, "invalid manual-edit recovery files");
    }
  } else if (value.type === "stale-base") {
    p.need(idsOk && (ids as string[]).length > 0, "a stale-base conflict needs candidates");
    if (isV51(value)) {
      const extra = value.extra;
      if (!isJsonObject(extra)) p.need(false, "missing extra");
      else {
        const storage = extra.current_storage;
        p.need(
          ["hot", "cold", "absent"].includes(storage as string),
          "invalid extra.current_storage",
        );
        p.need(
          (storage === "absent") === (line === null),
          "extra.current_storage disagrees with current_line",
        );
        if (storage === "cold") {
          p.need(
            typeof extra.current_archive_proposal_id === "string" &&
              PROPOSAL_ID.test(extra.current_archive_proposal_id) &&
              typeof extra.current_archive_date === "string" &&
              DATE_ONLY.test(extra.current_archive_date),
            "a cold snapshot needs its archive binding",
          );
        }
      }
    }
  }
  return p.list;
}

/** Problems of a resolution record named `id`. */
export function resolutionProblems(value: JsonObject, id: string): string[] {
  const p = new Problems();
  checkVersionAndId(p, value, "resolution", id);
  const ids = value.proposal_ids;
  const idsOk = isStringArray(ids) && ids.every((x) => PROPOSAL_ID.test(x)) &&
    new Set(ids).size === ids.length;
  p.need(idsOk, "proposal_ids must be unique proposal IDs");
  const choice = value.choice;
  p.need(
    typeof choice === "string" &&
      (choice === "current" || choice === "dismiss" ||
        (idsOk && (ids as string[]).includes(choice))),
    "choice is not current, dismiss or a candidate",
  );
  p.need(value.by === "user", "by must be user");
  if (isV502OrLater(value)) {
    p.need(value.authority === "human-asserted", "missing authority: human-asserted");
  } else if ("authority" in value) {
    p.need(value.authority === "human-asserted", "invalid authority");
  }
  p.need(isTimestamp(value.started_at), "invalid started_at");
  p.need(isInt(value.revision_before), "invalid revision_before");
  const status = value.status;
  p.need(
    ["applying", "failed", "resolved"].includes(status as string),
    "status must be applying, failed or resolved",
  );
  if (status === "resolved") {
    p.need(isTimestamp(value.resolved_at), "invalid resolved_at");
    p.need(isInt(value.revision_after), "invalid revision_after");
    if ("intended_revision_after" in value) {
      p.need(
        value.intended_revision_after === value.revision_after,
        "revision_after differs from intended_revision_after",
      );
    }
  } else if (isV51(value) && (status === "applying" || status === "failed")) {
    p.need(isInt(value.intended_revision_after), "missing intended_revision_after");
  }
  if (status === "failed") {
    p.need(isTimestamp(value.failed_at), "invalid failed_at");
    p.need(isOneLine(value.error, 1000), "invalid error");
  }
  if ("archived_raw" in value) {
    p.need(typeof value.archived_raw === "string", "invalid archived_raw");
  }
  return p.list;
}

/** Intrinsic problems of a record of `kind` named `id`. */
export function recordProblems(kind: AuthorityKind, value: JsonObject, id: string): string[] {
  switch (kind) {
    case "proposal":
      return proposalProblems(value, id);
    case "decision":
      return decisionProblems(value, id);
    case "conflict":
      return conflictProblems(value, id);
    case "resolution":
      return resolutionProblems(value, id);
  }
}

/** `record_type` of a quarantine stub. */
export const STUB_TYPE = "authority-quarantine";
/** `record_type` of a restore receipt. */
export const RECEIPT_TYPE = "authority-restore-receipt";

/** True when `value` presents itself as a quarantine stub. */
export function isStub(value: JsonObject): boolean {
  return value.record_type === STUB_TYPE;
}

/** Relative path of a record (as stubs and receipts name it). */
export function recordRelPath(kind: AuthorityKind, id: string): string {
  return `.bimri/${KIND_FOLDER[kind]}/${id}.json`;
}

/** Relative path of quarantine evidence. */
export function evidenceRelPath(kind: AuthorityKind, id: string, sha: string): string {
  return `.bimri/recovery/authority-${kind}-${id}-${sha}.json`;
}

/** Problems of a quarantine stub at the record path of `kind`/`id`. */
export function stubProblems(value: JsonObject, kind: AuthorityKind, id: string): string[] {
  const p = new Problems();
  const fields = [
    "authority",
    "bimri_version",
    "original_path",
    "original_type",
    "quarantine_schema",
    "quarantined_at",
    "record_id",
    "record_kind",
    "record_type",
    "recovery_file",
    "sha256",
    "status",
  ];
  p.need(Object.keys(value).sort().join(",") === fields.join(","), "stub fields are not exact");
  p.need(value.authority === "human-asserted", "stub authority must be human-asserted");
  p.need(RECORD_VERSIONS.includes(value.bimri_version as string), "invalid stub bimri_version");
  p.need(value.original_path === recordRelPath(kind, id), "stub original_path does not match");
  p.need(
    ["file", "missing", "symbolic-link"].includes(value.original_type as string),
    "invalid original_type",
  );
  p.need(value.quarantine_schema === 1, "invalid quarantine_schema");
  p.need(isTimestamp(value.quarantined_at), "invalid quarantined_at");
  p.need(value.record_id === id && value.record_kind === kind, "stub names another record");
  p.need(value.status === "quarantined", "invalid stub status");
  const sha = value.sha256;
  p.need(typeof sha === "string" && HEX64.test(sha), "invalid stub sha256");
  p.need(
    typeof sha === "string" && value.recovery_file === evidenceRelPath(kind, id, sha),
    "stub recovery_file does not match its sha256",
  );
  return p.list;
}

/** Problems of a restore receipt whose file name carries `kind`, `id`, original and replacement hashes. */
export function receiptProblems(
  value: JsonObject,
  kind: AuthorityKind,
  id: string,
  original: string,
  replacement: string,
): string[] {
  const p = new Problems();
  const fields = [
    "authority",
    "authorized_at",
    "bimri_version",
    "original_sha256",
    "record_id",
    "record_kind",
    "record_type",
    "recovery_file",
    "replacement_sha256",
    "restore_schema",
    "status",
    "target_path",
  ];
  p.need(Object.keys(value).sort().join(",") === fields.join(","), "receipt fields are not exact");
  p.need(value.authority === "human-asserted", "receipt authority must be human-asserted");
  p.need(isTimestamp(value.authorized_at), "invalid authorized_at");
  p.need(RECORD_VERSIONS.includes(value.bimri_version as string), "invalid receipt bimri_version");
  p.need(value.original_sha256 === original, "original_sha256 does not match the file name");
  p.need(
    value.replacement_sha256 === replacement,
    "replacement_sha256 does not match the file name",
  );
  p.need(value.record_id === id && value.record_kind === kind, "receipt names another record");
  p.need(value.record_type === RECEIPT_TYPE, "invalid record_type");
  p.need(value.recovery_file === evidenceRelPath(kind, id, original), "invalid recovery_file");
  p.need(value.restore_schema === 1, "invalid restore_schema");
  p.need(value.status === "authorized-restore", "invalid receipt status");
  p.need(value.target_path === recordRelPath(kind, id), "invalid target_path");
  return p.list;
}
