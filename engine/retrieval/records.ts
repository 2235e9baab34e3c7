/**
 * The retrieval records of a store, built live from authority: hot lines of
 * the accepted head, cold-current records, historical generations from the
 * archive, and held candidates from decisions and proposals. Nothing here
 * writes, and nothing reads `.bimri/index.tsv`.
 */
import { type MemoryEntry, normalizeTags, parseAnyEntry } from "../model/hot.ts";
import { TAG } from "../model/ids.ts";
import type { SearchFields } from "./search_fields.ts";
import type { JsonObject } from "../model/json.ts";
import { listNames } from "../store/files.ts";
import { knownHeldDecisions } from "../integrity/summary.ts";
import type { Store } from "../store/store.ts";
import { readDecision } from "../records/decision.ts";
import { type Proposal, proposalEquivalent, readProposal } from "../records/proposal.ts";
import { BimriError } from "../errors.ts";
import { historicalGenerations } from "./archive_read.ts";
import { readAllArchiveRecords, verifyColdBinding } from "../store/archive_month.ts";
import { coldRecordOf } from "../model/state.ts";

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

/** The typed `--json` fields of a held proposal, by tier. */
export function typedProposalFields(proposal: Proposal): JsonObject {
  const fields: JsonObject = { tier: proposal.tier, operation: proposal.operation };
  if (proposal.tier === 1) fields.kind = proposal.kind;
  if (proposal.tier === 2) {
    fields.importance = proposal.importance;
    fields.status = proposal.status;
  }
  if (proposal.tier === 3) {
    fields.confidence = proposal.confidence;
    fields.observations = proposal.observations;
    fields.evidence = [...proposal.evidence];
    fields.falsifier = proposal.falsifier;
  }
  if (proposal.tier !== 3) {
    const tags = normalizeTags(proposal.tags);
    fields.tags = tags.every((tag) => TAG.test(tag)) && tags.length <= 12 ? tags : [];
  }
  return fields;
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
    verifyColdBinding(store.paths, key, cold);
    const entry = parseStored(cold.raw_line, `cold-current record ${key}`);
    records.push(entryRecord(entry, "COLD", "current", key));
  }
  return records;
}

/** The current entry of every key: hot lines, then cold-current records. */
export function currentEntriesByKey(store: Store): Map<string, MemoryEntry> {
  return currentRecords(store).currentByKey;
}

/** Every hot line and cold-current record, with a map of the current entry per key. */
export function currentRecords(store: Store): {
  records: RetrievalRecord[];
  currentByKey: Map<string, MemoryEntry>;
} {
  const records: RetrievalRecord[] = [];
  const currentByKey = new Map<string, MemoryEntry>();
  for (const { entry } of store.head.view.entries) {
    currentByKey.set(entry.key, entry);
    records.push(entryRecord(entry, "HOT", "current"));
  }
  const cold = store.state.cold_current;
  for (const key of Object.keys(cold).sort()) {
    const entry = parseStored(cold[key].raw_line, `cold-current record ${key}`);
    currentByKey.set(key, entry);
    records.push(entryRecord(entry, "COLD", "current", key));
  }
  return { records, currentByKey };
}

const DECISION_FILE = /^(R[0-9]+-Q[0-9]+)\.json$/;

/**
 * Held candidates: decisions with outcome `held` whose proposal is not
 * already what current memory holds. Optionally only for one key.
 */
export function heldRecords(
  store: Store,
  currentByKey: ReadonlyMap<string, MemoryEntry>,
  onlyKey?: string,
  heldIds?: readonly string[],
): RetrievalRecord[] {
  const records: RetrievalRecord[] = [];
  // A caller that has just read every decision names the held ones; else the
  // engine's summary does while the decisions folder is unchanged since it was
  // recorded; otherwise every decision is read.
  const known = heldIds ?? knownHeldDecisions(store.paths);
  const names = known !== null
    ? known.map((id) => `${id}.json`)
    : listNames(store.paths.folder("decisions"));
  for (const name of names) {
    const match = DECISION_FILE.exec(name);
    if (!match) continue;
    const decision = readDecision(store.paths, match[1]);
    if (decision === null || decision.outcome !== "held") continue;
    const loaded = readProposal(store.paths, match[1]);
    if (loaded === null) {
      throw new BimriError(
        "store-corrupt",
        `held decision ${match[1]} has no proposal file; run doctor.`,
      );
    }
    const proposal = loaded.proposal;
    if (onlyKey !== undefined && proposal.key !== onlyKey) continue;
    if (proposalEquivalent(proposal, currentByKey.get(proposal.key) ?? null)) continue;
    const typed = typedProposalFields(proposal);
    records.push({
      location: "HELD",
      key: proposal.key,
      id: proposal.proposal_id,
      reason: typeof decision.reason === "string" ? decision.reason : "",
      trust: proposal.trust ?? "",
      source: proposal.source ?? "",
      text: proposal.text,
      typed,
      tags: Array.isArray(typed.tags) ? typed.tags.map(String) : [],
      falsifier: proposal.tier === 3 ? proposal.falsifier : "",
    });
  }
  return records;
}

/** Records to search, and how many history rows were left out unparsed. */
export type Candidates = { records: RetrievalRecord[]; skipped: number };

/**
 * Current and historical records: hot, cold, history (replaced, closed and
 * formerly cooled generations from the archive) and held candidates.
 * `keepRow` may leave archive rows out before they are parsed (they are
 * counted in `skipped`); held and current records are always included.
 */
export function candidateRecords(
  store: Store,
  keepRow: (rawLine: string, reason: string) => boolean = () => true,
  onlyKey?: string,
): Candidates {
  const { records, currentByKey } = currentRecords(store);
  let skipped = 0;
  for (
    const row of historicalGenerations(readAllArchiveRecords(store.paths), store.state.cold_current)
  ) {
    if (!keepRow(row.rawLine, row.reason)) {
      skipped++;
      continue;
    }
    const entry = parseStored(row.rawLine, `archive record in ${row.file}`);
    records.push(entryRecord(entry, "HISTORY", row.reason));
  }
  records.push(...heldRecords(store, currentByKey, onlyKey));
  return { records, skipped };
}

/** Every record of one key: current, held and historical (other subjects' rows are not parsed). */
export function keyRecords(store: Store, key: string): RetrievalRecord[] {
  // Every memory line names its key as `[K:<key>]`; other rows cannot belong to it.
  const marker = `[K:${key}]`;
  const { records } = candidateRecords(store, (rawLine) => rawLine.includes(marker), key);
  return records.filter((record) => record.key === key);
}

/** Every current, held and historical record. */
export function allRecords(store: Store): RetrievalRecord[] {
  return candidateRecords(store).records;
}
