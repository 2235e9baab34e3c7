/**
 * Shared records (`.bimri-share/<replica>/<seq>.json`): the schema, the
 * canonical bytes with their SHA-256, and a strict validator. Records are
 * data only: every field is checked against a grammar before anything reads
 * it, and nothing in a record is ever executed or used as a path.
 */
import { visible } from "../model/visible.ts";
import {
  ACTOR,
  ANY_ENTRY_ID,
  CONFLICT_ID,
  KEY,
  KEY_MAX,
  PROPOSAL_ID,
  RUN_ID,
  TAG,
} from "../model/ids.ts";
import {
  codePointLength,
  decodeUtf8Strict,
  hasLineBreakOrControl,
  sha256Hex,
} from "../model/text.ts";
import { TIMESTAMP } from "../model/time.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../model/json.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import { EVENT_ID, MAX_SEQ, REPLICA_ID } from "./ids.ts";
import type { Vector } from "./vector.ts";

/** The format tag every record carries. */
export const RECORD_FORMAT = "bimri-share/1";
/** Records larger than this are refused unread. */
export const RECORD_MAX_BYTES = 65_536;

/** The memory content a change leaves behind (local IDs and run markers excluded). */
export type SharedEntry =
  | {
    tier: 1;
    text: string;
    kind: string;
    trust: string;
    source: string;
    tags: string[];
  }
  | {
    tier: 2;
    text: string;
    importance: number;
    status: string;
    trust: string;
    source: string;
    tags: string[];
  }
  | {
    tier: 3;
    text: string;
    confidence: string;
    observations: number;
    evidence: string[];
    falsifier: string;
  };

/** What produced a record. */
export type RecordKind = "change" | "resolution" | "seed";

/** One shared record. */
export type ShareRecord = {
  replica: string;
  seq: number;
  kind: RecordKind;
  key: string;
  operation: "set" | "touch" | "close";
  /** The key's content after the change (null: absent). */
  entry: SharedEntry | null;
  /** The key's shared generation this change replaced (null: none known). */
  replaces: string | null;
  /** For a resolution: the candidate generations it answered. */
  resolves: string[];
  /** The local run that made the change (null for a seed). */
  run: string | null;
  actor: string;
  at: string;
  /** The decision source: a proposal ID, a conflict ID, or `seed`. */
  source: string;
  /** Highest seq seen per replica before this change (this replica: seq - 1). */
  vector: Vector;
  /** The replica's Ed25519 signature of the record's hash (see sign.ts); absent on older records. */
  signature?: string;
  /**
   * How many seqs right before this one hold no record of its replica: its
   * author found files it had not written there (a pusher's) and passed over
   * them (own.ts). Signed with the rest, so only the author can say it; absent
   * when none were passed over (every record before this field existed).
   */
  passed?: number;
};

/** The record's canonical JSON object (without the hash). */
function recordBody(record: ShareRecord): JsonObject {
  const body: JsonObject = {
    actor: record.actor,
    at: record.at,
    entry: record.entry as JsonValue,
    format: RECORD_FORMAT,
    key: record.key,
    kind: record.kind,
    operation: record.operation,
    replaces: record.replaces,
    replica: record.replica,
    resolves: record.resolves,
    run: record.run,
    seq: record.seq,
    source: record.source,
    vector: record.vector,
  };
  // Only when present: every record written without it keeps its bytes and hash.
  if (record.passed !== undefined) body.passed = record.passed;
  return body;
}

/** The exact bytes of a record file: canonical JSON with `sha256` of the body's canonical JSON. */
export function recordText(record: ShareRecord, sha256?: string): string {
  const body = recordBody(record);
  // `sha256`: recordHash(record), when the caller has just computed it to sign it.
  const out: JsonObject = { ...body, sha256: sha256 ?? recordHash(record) };
  if (record.signature !== undefined) out.signature = record.signature;
  return canonicalJson(out);
}

/** The record's `sha256`: the SHA-256 of its body's canonical JSON (what a signature covers). */
export function recordHash(record: ShareRecord): string {
  return sha256Hex(canonicalJson(recordBody(record)));
}

/** Why a record file was refused. */
export class RecordProblem extends Error {}

function fail(message: string): never {
  throw new RecordProblem(message);
}

function str(o: JsonObject, field: string): string {
  const v = o[field];
  if (typeof v !== "string") fail(`field ${field} must be a string`);
  return v;
}

function int(o: JsonObject, field: string, min: number, max: number): number {
  const v = o[field];
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    fail(`field ${field} must be an integer from ${min} to ${max}`);
  }
  return v;
}

function oneOf(o: JsonObject, field: string, values: readonly string[]): string {
  const v = str(o, field);
  if (!values.includes(v)) fail(`field ${field} must be one of ${values.join(", ")}`);
  return v;
}

function text(o: JsonObject, field: string, max: number, allowEmpty: boolean): string {
  const v = str(o, field);
  if (hasLineBreakOrControl(v) || v.trim() !== v || codePointLength(v) > max) {
    fail(`field ${field} must be one trimmed line of at most ${max} characters`);
  }
  if (!allowEmpty && v.length === 0) fail(`field ${field} must not be empty`);
  return v;
}

function exactFields(o: JsonObject, fields: readonly string[], what: string): void {
  const keys = Object.keys(o).sort();
  const want = [...fields].sort();
  if (keys.length !== want.length || keys.some((k, i) => k !== want[i])) {
    fail(`${what} must have exactly the fields ${want.join(", ")}`);
  }
}

function tags(o: JsonObject): string[] {
  const v = o.tags;
  if (!Array.isArray(v) || v.length > 12) fail("field tags must be a list of at most 12 tags");
  return v.map((t) => {
    if (typeof t !== "string" || !TAG.test(t)) fail("field tags holds an invalid tag");
    return t;
  });
}

function parseEntry(v: JsonValue): SharedEntry | null {
  if (v === null) return null;
  if (!isJsonObject(v)) fail("field entry must be an object or null");
  const tier = int(v, "tier", 1, 3);
  if (tier === 1) {
    exactFields(v, ["tier", "text", "kind", "trust", "source", "tags"], "a Tier 1 entry");
    return {
      tier,
      text: text(v, "text", 4000, false),
      kind: oneOf(v, "kind", ["decision", "fact", "pref", "rule"]),
      trust: oneOf(v, "trust", ["working", "confirmed"]),
      source: oneOf(v, "source", ["user", "agent", "external", "system"]),
      tags: tags(v),
    };
  }
  if (tier === 2) {
    exactFields(
      v,
      ["tier", "text", "importance", "status", "trust", "source", "tags"],
      "a Tier 2 entry",
    );
    return {
      tier,
      text: text(v, "text", 4000, false),
      importance: int(v, "importance", 1, 5),
      status: oneOf(v, "status", ["active", "watch", "closed"]),
      trust: oneOf(v, "trust", ["working", "confirmed"]),
      source: oneOf(v, "source", ["user", "agent", "external", "system"]),
      tags: tags(v),
    };
  }
  exactFields(
    v,
    ["tier", "text", "confidence", "observations", "evidence", "falsifier"],
    "a Tier 3 entry",
  );
  const evidence = v.evidence;
  if (!Array.isArray(evidence) || evidence.length > 24) fail("field evidence must be a list");
  return {
    tier: 3,
    text: text(v, "text", 4000, false),
    confidence: oneOf(v, "confidence", ["emerging", "developing", "established"]),
    observations: int(v, "observations", 1, 1_000_000),
    evidence: evidence.map((e) => {
      if (typeof e !== "string" || !ANY_ENTRY_ID.test(e)) {
        fail("field evidence holds an invalid ID");
      }
      return e;
    }),
    falsifier: text(v, "falsifier", 500, true),
  };
}

function eventOrNull(o: JsonObject, field: string): string | null {
  const v = o[field];
  if (v === null) return null;
  if (typeof v !== "string" || !EVENT_ID.test(v)) {
    fail(`field ${field} must be an event ID or null`);
  }
  return v;
}

function parseVector(v: JsonValue): Vector {
  if (!isJsonObject(v)) fail("field vector must be an object");
  const out: Vector = {};
  for (const [replica, seq] of Object.entries(v)) {
    if (!REPLICA_ID.test(replica)) fail("field vector names an invalid replica");
    if (typeof seq !== "number" || !Number.isInteger(seq) || seq < 0 || seq > MAX_SEQ) {
      fail("field vector holds an invalid sequence number");
    }
    out[replica] = seq;
  }
  return out;
}

const RECORD_FIELDS = [
  "actor",
  "at",
  "entry",
  "format",
  "key",
  "kind",
  "operation",
  "replaces",
  "replica",
  "resolves",
  "run",
  "seq",
  "sha256",
  "source",
  "vector",
] as const;

/**
 * Parses and checks the bytes of record file `<seq>.json` in the folder of
 * `replica`: size, strict UTF-8, canonical JSON, the hash, every field's
 * grammar, and that the record names its own folder and file. Throws a
 * RecordProblem saying what is wrong.
 */
export function parseRecordBytes(bytes: Uint8Array, replica: string, seq: number): ShareRecord {
  if (bytes.length > RECORD_MAX_BYTES) fail(`larger than ${RECORD_MAX_BYTES} bytes`);
  const raw8 = decodeUtf8Strict(bytes);
  if (raw8 === null) fail("not valid UTF-8");
  // A checkout with CRLF line endings (core.autocrlf) is read as its
  // canonical LF form: JSON strings escape every CR and LF, so only the
  // line breaks between tokens change, and the hash is checked on that form.
  const decoded = raw8.includes("\r\n") ? raw8.replaceAll("\r\n", "\n") : raw8;
  let raw: JsonValue;
  try {
    raw = JSON.parse(decoded) as JsonValue;
  } catch {
    fail("not valid JSON (truncated or malformed)");
  }
  if (!isJsonObject(raw)) fail("not a JSON object");
  const { signature, passed, ...unsigned } = raw;
  if (signature !== undefined && typeof signature !== "string") {
    fail("field signature must be a string");
  }
  exactFields(unsigned, RECORD_FIELDS, "a record");
  if (passed !== undefined) {
    if (typeof passed !== "number" || !Number.isInteger(passed) || passed < 1 || passed >= seq) {
      fail(`field passed must be an integer from 1 to ${seq - 1}`);
    }
    // It lets other clones stop waiting for seqs: only a signed record may say so.
    if (signature === undefined) fail("field passed is allowed only in a signed record");
  }
  if (raw.format !== RECORD_FORMAT) fail(`unknown format (expected ${RECORD_FORMAT})`);
  const record: ShareRecord = {
    replica: str(raw, "replica"),
    seq: int(raw, "seq", 1, MAX_SEQ),
    kind: oneOf(raw, "kind", ["change", "resolution", "seed"]) as RecordKind,
    key: str(raw, "key"),
    operation: oneOf(raw, "operation", ["set", "touch", "close"]) as ShareRecord["operation"],
    entry: parseEntry(raw.entry),
    replaces: eventOrNull(raw, "replaces"),
    resolves: [],
    run: raw.run === null ? null : str(raw, "run"),
    actor: str(raw, "actor"),
    at: str(raw, "at"),
    source: str(raw, "source"),
    vector: parseVector(raw.vector),
  };
  if (typeof passed === "number") record.passed = passed;
  if (record.replica !== replica) {
    fail(`names replica ${visible(record.replica)}, not its folder ${visible(replica)}`);
  }
  if (record.seq !== seq) fail(`names seq ${record.seq}, not its file name`);
  if (!KEY.test(record.key) || record.key.length > KEY_MAX) fail("field key is not a valid key");
  if (record.run !== null && !RUN_ID.test(record.run)) fail("field run is not a run ID");
  if (!ACTOR.test(record.actor)) fail("field actor is not a valid actor");
  if (!TIMESTAMP.test(record.at)) fail("field at is not a UTC timestamp");
  if (
    record.source !== "seed" && !PROPOSAL_ID.test(record.source) &&
    !CONFLICT_ID.test(record.source)
  ) {
    fail("field source must be a proposal ID, a conflict ID or seed");
  }
  if ((record.operation === "close") !== (record.entry === null)) {
    fail("a close leaves no entry; every other operation leaves one");
  }
  const resolves = raw.resolves;
  if (!Array.isArray(resolves) || resolves.length > 1000) fail("field resolves must be a list");
  record.resolves = resolves.map((e) => {
    if (typeof e !== "string" || !EVENT_ID.test(e)) fail("field resolves holds an invalid event");
    return e;
  });
  if ((record.vector[replica] ?? 0) !== seq - 1) {
    fail(`its vector must name seq ${seq - 1} for its own replica`);
  }
  const expectedHash = sha256Hex(canonicalJson(recordBody(record)));
  if (raw.sha256 !== expectedHash) fail("SHA-256 mismatch (the record was altered)");
  if (canonicalJson(raw) !== decoded) fail("not in canonical JSON form");
  if (signature !== undefined) record.signature = signature;
  return record;
}
