/**
 * `.bimri/state.json`: the mutable head pointer, counters, runs and the
 * cold-current map, with a strict validator (malformed state fails closed).
 */
import { BimriError } from "../errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "./json.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";
import { ACTOR, ANY_ENTRY_ID, KEY, PROPOSAL_ID, RUN_ID } from "./ids.ts";
import { DATE } from "./time.ts";

/**
 * One open run. Only `actor` and `base_revision` are load-bearing; the
 * timestamps and session key are kept exactly as found (a hand-edited
 * entry without them still loads, as in the reference), and any other
 * field rides along untouched.
 */
export type ActiveRun = {
  actor: string;
  base_revision: number;
  started_at?: JsonValue;
  last_activity_at?: JsonValue;
  session_key?: JsonValue;
  [field: string]: JsonValue | undefined;
};

/** A current Tier 2 subject held outside the hot view. */
export type ColdRecord = {
  entry_id: string;
  key: string;
  tier: number;
  raw_line: string;
  line_hash: string;
  archived_by: string;
  archived_on: string;
};

/** The typed fields of state.json; unknown fields ride along in `extras`. */
export type State = {
  bimri_version: string;
  project_id: string;
  cadence_class: string;
  run_count: number;
  conflict_count: number;
  pattern_count: number;
  head_revision: number;
  head_hash: string | null;
  active_runs: Record<string, ActiveRun>;
  session_runs: Record<string, string>;
  run_dates: Record<string, string>;
  cold_current: Record<string, ColdRecord>;
  /** Kept as found: the reference neither checks nor reads it. */
  last_started_at: JsonValue;
  /** Kept as found: the reference neither checks nor reads it. */
  last_closed_at: JsonValue;
  prune_policy: string;
  tier1_max: number;
  tier2_max: number;
  tier3_max: number;
  entry_max_chars: number;
  hot_max_bytes: number;
  flag_threshold: number;
  last_revision_reason?: string;
  extras: JsonObject;
};

const TYPED_FIELDS = new Set([
  "bimri_version",
  "project_id",
  "cadence_class",
  "run_count",
  "conflict_count",
  "pattern_count",
  "head_revision",
  "head_hash",
  "active_runs",
  "session_runs",
  "run_dates",
  "cold_current",
  "last_started_at",
  "last_closed_at",
  "prune_policy",
  "tier1_max",
  "tier2_max",
  "tier3_max",
  "entry_max_chars",
  "hot_max_bytes",
  "flag_threshold",
  "last_revision_reason",
]);

/** A fresh state for a new store whose genesis revision hashes to `headHash`. */
export function genesisState(headHash: string): State {
  return {
    bimri_version: AUTHORITY_FORMAT,
    project_id: "unset",
    cadence_class: "interactive",
    run_count: 0,
    conflict_count: 0,
    pattern_count: 0,
    head_revision: 0,
    head_hash: headHash,
    active_runs: {},
    session_runs: {},
    run_dates: {},
    cold_current: {},
    last_started_at: null,
    last_closed_at: null,
    prune_policy: "archive_only",
    tier1_max: 20,
    tier2_max: 40,
    tier3_max: 12,
    entry_max_chars: 500,
    hot_max_bytes: 49152,
    flag_threshold: 0.5,
    extras: {},
  };
}

function fail(detail: string): never {
  throw new BimriError(
    "store-corrupt",
    `state.json is invalid (${detail}); BIMRI will not reset it. Restore .bimri/state.json from a backup or repair the field, then run doctor.`,
  );
}

function int(obj: JsonObject, field: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = obj[field];
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    fail(`${field} must be an integer from ${min}`);
  }
  return v;
}

function str(obj: JsonObject, field: string): string {
  const v = obj[field];
  if (typeof v !== "string") fail(`${field} must be a string`);
  return v;
}

function objectField(obj: JsonObject, field: string): JsonObject {
  const v = obj[field];
  if (!isJsonObject(v)) fail(`${field} must be an object`);
  return v;
}

function parseActiveRun(run: string, value: JsonValue): ActiveRun {
  if (!RUN_ID.test(run) || !isJsonObject(value)) fail(`active_runs.${run} is malformed`);
  const actor = value.actor;
  const base = value.base_revision;
  if (typeof actor !== "string" || !ACTOR.test(actor)) fail(`active_runs.${run}.actor`);
  if (typeof base !== "number" || !Number.isInteger(base) || base < 0) {
    fail(`active_runs.${run}.base_revision`);
  }
  return { ...value, actor, base_revision: base };
}

function parseCold(key: string, value: JsonValue): ColdRecord {
  if (!isJsonObject(value)) fail(`cold_current.${key} is malformed`);
  const r = value;
  const ok = KEY.test(key) && r.key === key && r.tier === 2 &&
    typeof r.entry_id === "string" && ANY_ENTRY_ID.test(r.entry_id) &&
    typeof r.raw_line === "string" && typeof r.line_hash === "string" &&
    /^[0-9a-f]{64}$/.test(r.line_hash) &&
    typeof r.archived_by === "string" && PROPOSAL_ID.test(r.archived_by) &&
    typeof r.archived_on === "string" && DATE.test(r.archived_on) && Object.keys(r).length === 7;
  if (!ok) fail(`cold_current.${key} is malformed`);
  return coldRecord(
    r.entry_id as string,
    key,
    r.raw_line as string,
    r.line_hash as string,
    r.archived_by as string,
    r.archived_on as string,
  );
}

/**
 * A cold record. Its fields are created in canonical (sorted) order, so
 * saving state, hundreds of cold subjects at a time, copies none of them.
 */
export function coldRecord(
  entryId: string,
  key: string,
  rawLine: string,
  lineHash: string,
  archivedBy: string,
  archivedOn: string,
): ColdRecord {
  return {
    archived_by: archivedBy,
    archived_on: archivedOn,
    entry_id: entryId,
    key,
    line_hash: lineHash,
    raw_line: rawLine,
    tier: 2,
  };
}

type StateMaps = Pick<State, "active_runs" | "session_runs" | "run_dates" | "cold_current">;

function validatedMaps(raw: JsonObject): StateMaps {
  const active: Record<string, ActiveRun> = {};
  for (const [run, value] of Object.entries(objectField(raw, "active_runs"))) {
    active[run] = parseActiveRun(run, value);
  }
  const sessions: Record<string, string> = {};
  for (const [key, value] of Object.entries(objectField(raw, "session_runs"))) {
    if (typeof value !== "string" || !RUN_ID.test(value)) fail(`session_runs.${key}`);
    sessions[key] = value;
  }
  const dates: Record<string, string> = {};
  for (const [run, value] of Object.entries(objectField(raw, "run_dates"))) {
    if (!/^R[0-9]+$/.test(run) || typeof value !== "string" || !DATE.test(value)) {
      fail(`run_dates.${run}`);
    }
    dates[run] = value;
  }
  const cold: Record<string, ColdRecord> = {};
  for (const [key, value] of Object.entries(objectField(raw, "cold_current"))) {
    cold[key] = parseCold(key, value);
  }
  return { active_runs: active, session_runs: sessions, run_dates: dates, cold_current: cold };
}

// bimri wrote these entries from validated ones, in canonical field order.
function ownMaps(raw: JsonObject): StateMaps {
  return {
    active_runs: objectField(raw, "active_runs") as unknown as Record<string, ActiveRun>,
    session_runs: objectField(raw, "session_runs") as Record<string, string>,
    run_dates: objectField(raw, "run_dates") as Record<string, string>,
    cold_current: objectField(raw, "cold_current") as unknown as Record<string, ColdRecord>,
  };
}

/** A state.json of another memory format than the one bimri reads (`found` is its bimri_version). */
export class StateFormatError extends BimriError {
  /** Creates the refusal for the state's `bimri_version` value. */
  constructor(readonly found: JsonValue) {
    super(
      "store-corrupt",
      `this store has memory format ${
        JSON.stringify(found)
      }; bimri reads ${AUTHORITY_FORMAT}. ${StateFormatError.nextStep}`,
    );
  }

  /** What the owner does about it. */
  static readonly nextStep =
    "Run install --target <project> --quiescent (or migrate) to upgrade it.";
}

/**
 * Validates parsed state JSON of format 5.1.0 and returns the typed state.
 * With `ownWrite` (the file is proven to be bimri's own canonical write, see
 * store/head_cache.ts) the maps' entries, which bimri validated before it
 * wrote them, are taken as read; every top-level field is still checked.
 */
export function parseState(raw: JsonValue, ownWrite = false): State {
  if (!isJsonObject(raw)) fail("the top level must be an object");
  const version = raw.bimri_version;
  if (version !== AUTHORITY_FORMAT) throw new StateFormatError(version ?? null);
  const required = [...TYPED_FIELDS].filter((f) => f !== "last_revision_reason");
  for (const field of required) if (!(field in raw)) fail(`${field} is missing`);
  const headHash = raw.head_hash;
  if (headHash !== null && (typeof headHash !== "string" || !/^[0-9a-f]{64}$/.test(headHash))) {
    fail("head_hash");
  }
  const maps = ownWrite ? ownMaps(raw) : validatedMaps(raw);
  const cadence = str(raw, "cadence_class");
  if (!["interactive", "daily_cron", "hourly_cron"].includes(cadence)) fail("cadence_class");
  if (raw.prune_policy !== "archive_only") fail("prune_policy must be archive_only");
  const threshold = raw.flag_threshold;
  if (typeof threshold !== "number" || threshold < 0) fail("flag_threshold");
  const reason = raw.last_revision_reason;
  if (reason !== undefined && (typeof reason !== "string" || reason.length > 300)) {
    fail("last_revision_reason");
  }
  const epoch = raw._audit_epoch;
  if (epoch !== undefined && (typeof epoch !== "number" || !Number.isInteger(epoch) || epoch < 0)) {
    fail("_audit_epoch");
  }
  const extras: JsonObject = {};
  for (const [k, v] of Object.entries(raw)) if (!TYPED_FIELDS.has(k)) extras[k] = v;
  return {
    bimri_version: version,
    project_id: str(raw, "project_id"),
    cadence_class: cadence,
    run_count: int(raw, "run_count", 0, 999999),
    conflict_count: int(raw, "conflict_count", 0, 999999),
    pattern_count: int(raw, "pattern_count", 0),
    head_revision: int(raw, "head_revision", 0, 999999),
    head_hash: headHash as string | null,
    ...maps,
    last_started_at: raw.last_started_at,
    last_closed_at: raw.last_closed_at,
    prune_policy: "archive_only",
    tier1_max: int(raw, "tier1_max", 0),
    tier2_max: int(raw, "tier2_max", 0),
    tier3_max: int(raw, "tier3_max", 0),
    entry_max_chars: int(raw, "entry_max_chars", 1),
    hot_max_bytes: int(raw, "hot_max_bytes", 1),
    flag_threshold: threshold,
    last_revision_reason: reason as string | undefined,
    extras,
  };
}

/**
 * The cold-current record of `key`, or undefined. Only the map's own
 * entries count: "constructor" is a valid memory key, and a plain lookup
 * would find Object.prototype's.
 */
export function coldRecordOf(state: State, key: string): ColdRecord | undefined {
  return Object.hasOwn(state.cold_current, key) ? state.cold_current[key] : undefined;
}

/** The JSON document to write for `state` (extras preserved, fields sorted by the serializer). */
export function stateToJson(state: State): JsonObject {
  const out: JsonObject = { ...state.extras };
  for (const field of TYPED_FIELDS) {
    const value = (state as unknown as Record<string, JsonValue | undefined>)[field];
    if (value !== undefined) out[field] = value;
  }
  return out;
}

/**
 * The state a commit edits into the next one: its top-level fields and its
 * `cold_current` map are the copy's own (a commit changes only those), while
 * the records inside are shared, never edited in place. A deep copy of a
 * state with hundreds of cold subjects cost a commit about 10 ms.
 */
export function stateToEdit(state: State): State {
  return { ...state, cold_current: { ...state.cold_current } };
}
