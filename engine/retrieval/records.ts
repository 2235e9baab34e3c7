/**
 * The retrieval records of a store, built live from authority: hot lines of
 * the accepted head, cold-current records, historical generations from the
 * archive, and held candidates from decisions and proposals. Nothing here
 * writes, and nothing reads `.bimri/index.tsv`.
 */
import { type MemoryEntry, normalizeTags } from "../model/hot.ts";
import { TAG } from "../model/ids.ts";
import type { JsonObject } from "../model/json.ts";
import { listNames } from "../store/files.ts";
import { knownHeldDecisions } from "../integrity/summary.ts";
import type { Store } from "../store/store.ts";
import { readDecision } from "../records/decision.ts";
import { type Proposal, proposalEquivalent, readProposal } from "../records/proposal.ts";
import { BimriError } from "../errors.ts";
import { historicalGenerations } from "./archive_read.ts";
import { readAllArchiveRecords } from "../store/archive_month.ts";
import { entryRecord, parseStored, type RetrievalRecord } from "./lookup.ts";

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
