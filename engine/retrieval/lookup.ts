/**
 * A retrieval record (a memory line or candidate as recall prints it), the
 * reference's output order of matches, and the exact lookup of one key's
 * current generation (`get --key`): hot line, or cold record proven against
 * its own archive month. records.ts gathers the other groups (held, history).
 */
import { type MemoryEntry, normalizeTags, parseAnyEntry } from "../model/hot.ts";
import { TAG } from "../model/ids.ts";
import type { JsonObject } from "../model/json.ts";
import { coldRecordOf } from "../model/state.ts";
import { compareCodePoints } from "../model/text.ts";
import { BimriError } from "../errors.ts";
import { coldBindingCheck, type Store } from "../store/store.ts";
import type { SearchFields } from "./tokenize.ts";

/** The four groups, in the order results are printed. */
export const LOCATIONS = ["HOT", "COLD", "HELD", "HISTORY"] as const;
/** Where a record comes from. */
export type Location = typeof LOCATIONS[number];

/** One retrievable generation or candidate. */
export type RetrievalRecord = {
  location: Location;
  key: string;
  id: string;
  reason: string;
  trust: string;
  source: string;
  text: string;
  /** Tier-specific fields printed by `--json` (tier, kind, importance, tags, pointer, ...). */
  typed: JsonObject;
  /** Tags and falsifier, searched like the reference searches them. */
  tags: string[];
  falsifier: string;
};

/** Tags as the reference reports them: normalized when valid, else the raw non-empty items. */
function reportedTags(tags: readonly string[]): string[] {
  const normalized = normalizeTags([...tags]);
  const valid = normalized.length <= 12 && normalized.every((tag) => TAG.test(tag));
  return valid ? normalized : tags.filter((tag) => tag !== "");
}

/** The typed `--json` fields of a memory line, by tier. */
export function typedEntryFields(entry: MemoryEntry): JsonObject {
  if (entry.tier === 3) {
    return {
      tier: 3,
      confidence: entry.confidence,
      observations: entry.observations,
      evidence: entry.evidence.filter((id) => id !== ""),
      falsifier: entry.falsifier,
    };
  }
  const shared = { tags: reportedTags(entry.tags), pointer: entry.pointer ?? "" };
  if (entry.tier === 1) return { tier: 1, kind: entry.kind, ...shared };
  return {
    tier: 2,
    importance: entry.importance,
    status: entry.status,
    first_run: entry.first_run,
    last_run: entry.last_run,
    ...shared,
  };
}

/** The searchable fields of a record (the reference's list), as the search folds and weighs them. */
export function searchFieldsOf(record: RetrievalRecord): SearchFields {
  return {
    key: record.key,
    tags: record.tags.join(" "),
    id: record.id,
    text: record.text,
    falsifier: record.falsifier,
    reason: record.reason,
    location: record.location,
    trust: record.trust,
    source: record.source,
  };
}

/** A record for a memory line found at `location` with `reason`. */
export function entryRecord(
  entry: MemoryEntry,
  location: Location,
  reason: string,
  key = entry.key,
): RetrievalRecord {
  // Only printed matches need the typed fields; a search may weigh thousands
  // of history rows, so they are built on first use.
  let typed: JsonObject | undefined;
  return {
    location,
    key,
    id: entry.id,
    reason,
    trust: entry.tier === 3 ? "" : entry.trust,
    source: entry.tier === 3 ? "" : entry.source,
    text: entry.text,
    get typed(): JsonObject {
      return typed ??= typedEntryFields(entry);
    },
    tags: entry.tier === 3 ? [] : reportedTags(entry.tags),
    falsifier: entry.tier === 3 ? entry.falsifier : "",
  };
}

/** Parses a stored memory line, refusing one that is not valid. */
export function parseStored(raw: string, what: string): MemoryEntry {
  const entry = parseAnyEntry(raw);
  if (!entry) {
    throw new BimriError("store-corrupt", `${what} is not a valid memory line; run doctor.`);
  }
  return entry;
}

/**
 * The accepted current generation of one key: its hot line, or its cold
 * record proven against only that record's archive month. Reads the head
 * (already loaded), the state and at most one archive month.
 */
export function exactCurrentRecords(store: Store, key: string): RetrievalRecord[] {
  const records: RetrievalRecord[] = [];
  for (const { entry } of store.head.view.entries) {
    if (entry.key === key) records.push(entryRecord(entry, "HOT", "current"));
  }
  const cold = coldRecordOf(store.state, key);
  if (cold !== undefined) {
    if (records.length > 0) {
      throw new BimriError(
        "store-corrupt",
        `memory key ${key} is current both in bimri.md and in cold storage; run doctor.`,
      );
    }
    coldBindingCheck()(store.paths, key, cold);
    const entry = parseStored(cold.raw_line, `cold-current record ${key}`);
    records.push(entryRecord(entry, "COLD", "current", key));
  }
  return records;
}

/**
 * One match: the record plus its relevance score (0 for key lookups and
 * unranked queries) and, for a ranked query, the query words it matched and
 * whether it holds the phrase, every term, or some words.
 */
export type RecallMatch = RetrievalRecord & {
  score: number;
  matched?: string[];
  match?: "phrase" | "all" | "some";
};

/** What the output order compares of a record. */
export type OrderKey = Pick<RetrievalRecord, "location" | "key" | "id" | "reason">;

/** The reference's output order: group (HOT, COLD, HELD, HISTORY), then key, ID and reason. */
export function compareOrder(a: OrderKey, b: OrderKey): number {
  return LOCATIONS.indexOf(a.location) - LOCATIONS.indexOf(b.location) ||
    compareCodePoints(a.key, b.key) ||
    compareCodePoints(a.id, b.id) ||
    compareCodePoints(a.reason, b.reason);
}
