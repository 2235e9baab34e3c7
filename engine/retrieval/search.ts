/**
 * Ranked task-language search over current, held and historical memory
 * (BM25F, see ranking.ts): the HOT, COLD and HELD records from the store,
 * HISTORY from the derived history digest or, when it does not vouch for the
 * archive, from the archive itself.
 */
import type { Store } from "../store/store.ts";
import {
  addToCorpus,
  type CorpusPart,
  foldedLength,
  matchDocuments,
  newCorpusPart,
  rankDocuments,
  scoreMatch,
  type SearchFields,
} from "./ranking.ts";
import { historicalGenerations, readAllArchiveRecords } from "./archive_read.ts";
import {
  currentRecords,
  entryRecord,
  heldRecords,
  LOCATIONS,
  parseStored,
  type RetrievalRecord,
  searchFieldsOf,
} from "./records.ts";
import { containsTerm, type FoldedText, foldField, queryTerms } from "./tokenize.ts";
import {
  addDigestLengths,
  confirmDigestRow,
  DIGEST_FIELDS,
  digestGenerations,
  digestHits,
  digestReason,
  type LoadedDigest,
  loadHistoryDigest,
  readDigestRow,
} from "./history_digest.ts";
import { byGroupScoreAndKey, compareRanked, type RecallMatch } from "./recall.ts";

export { queryTerms };

/**
 * Ranked matches of `terms` among `records` (every term must occur; see
 * tokenize.ts). `background` counts further corpus documents known to
 * contain none of the terms: they only enlarge the corpus for IDF.
 */
export function searchRecords(
  records: readonly RetrievalRecord[],
  terms: readonly string[],
  background = 0,
): RecallMatch[] {
  return rankDocuments(records.map(searchFieldsOf), terms, background)
    .map(({ index, score }) => ({ ...records[index], score }))
    .sort(byGroupScoreAndKey);
}

/**
 * A matched record with the fields it is scored on, and, for a history row
 * read back from its month file, the check that must pass before it is printed.
 */
export type Scorable = { record: RetrievalRecord; fields: SearchFields; confirm?: () => void };

/**
 * History generations that match a query, with their share of the corpus
 * statistics. Each match is built only when its group is printed.
 */
export type HistoryMatches = {
  part: CorpusPart;
  matches: (() => Scorable)[];
};

/**
 * The first `limit` ranked matches (output order) and the total. Groups come
 * first in the order, so only the groups that reach into the first `limit`
 * are scored; the others are only counted (same result as sorting all).
 * `history`, when given, holds the HISTORY group already matched.
 */
export function searchFirst(
  records: readonly RetrievalRecord[],
  terms: readonly string[],
  background: number,
  limit: number,
  history: HistoryMatches | null = null,
): { matches: RecallMatch[]; total: number } {
  const fields = records.map(searchFieldsOf);
  const { matched, stats } = matchDocuments(fields, terms, background, history?.part ?? null);
  const matches: RecallMatch[] = [];
  let before = 0;
  for (const location of LOCATIONS) {
    const group = matched
      .filter((index) => records[index].location === location)
      .map((index) => ({ record: records[index], fields: fields[index] }));
    const pending = location === "HISTORY" && history ? history.matches : [];
    if (before < limit && group.length + pending.length > 0) {
      // Rank light {record, score} pairs; only the printed ones become matches.
      const top = new FirstRanked(limit - matches.length);
      for (const { record, fields } of group) top.offer(record, scoreMatch(fields, terms, stats));
      for (const build of pending) {
        const { record, fields, confirm } = build();
        top.offer(record, scoreMatch(fields, terms, stats), confirm);
      }
      for (const { record, score, confirm } of top.first()) {
        confirm?.();
        matches.push({ ...record, score });
      }
    }
    before += group.length + pending.length;
  }
  return {
    matches: matches.slice(0, limit),
    total: matched.length + (history?.matches.length ?? 0),
  };
}

type Ranked = { record: RetrievalRecord; score: number; confirm?: () => void };

/**
 * The first `room` of a stream of scored records, exactly as a stable sort of
 * the whole stream would order them, holding at most about twice `room` at a
 * time: a query that matches every archived generation builds thousands of
 * history records, and keeping each only while it is scored lets them die
 * young instead of growing the heap (a resident MCP server keeps that growth).
 */
class FirstRanked {
  #kept: Ranked[] = [];
  constructor(private readonly room: number) {}

  /** Adds the next record of the stream. */
  offer(record: RetrievalRecord, score: number, confirm?: () => void): void {
    if (this.room <= 0) return;
    this.#kept.push({ record, score, confirm });
    if (this.#kept.length >= 2 * this.room + 64) this.#trim();
  }

  /** The first `room` records in rank order. */
  first(): Ranked[] {
    this.#trim();
    return this.#kept;
  }

  // A stable sort keeps ties in stream order: kept records came before the
  // ones appended after them, and among themselves they are already in order.
  #trim(): void {
    this.#kept.sort((a, b) => compareRanked(a.record, a.score, b.record, b.score));
    if (this.#kept.length > this.room) this.#kept.length = this.room;
  }
}

/**
 * Matches the historical generations of the archive against `terms`. A row
 * whose raw line (with its reason and location) holds none of the terms can
 * neither match nor count in a term's document frequency, so it is counted
 * but never parsed; a row that matches contributes its statistics here and
 * becomes a printed record only if the HISTORY group reaches the limit.
 */
export function matchHistory(store: Store, terms: readonly string[]): HistoryMatches {
  const part = newCorpusPart(terms);
  const matches: HistoryMatches["matches"] = [];
  const rows = historicalGenerations(
    readAllArchiveRecords(store.paths),
    store.state.cold_current,
  );
  for (const row of rows) {
    const haystack = foldField(`${row.rawLine}\n${row.reason}\nHISTORY`);
    if (!terms.some((term) => containsTerm(haystack, term))) {
      part.size++;
      continue;
    }
    const entry = parseStored(row.rawLine, `archive record in ${row.file}`);
    const record = entryRecord(entry, "HISTORY", row.reason);
    const fields = searchFieldsOf(record);
    if (addToCorpus(part, fields, terms)) matches.push(() => ({ record, fields }));
  }
  return { part, matches };
}

/**
 * matchHistory from the derived history digest: the same generations, the
 * same matches and statistics, without reading or parsing the archive; only
 * printed matches are read back from their month file.
 */
export function matchHistoryDigest(
  store: Store,
  digest: LoadedDigest,
  terms: readonly string[],
): HistoryMatches {
  const part = newCorpusPart(terms);
  const matches: HistoryMatches["matches"] = [];
  const months = new Map<string, Uint8Array>();
  const reasons = new Map<string, { folded: FoldedText; length: number }>();
  const location = foldField("HISTORY");
  const locationLength = foldedLength("HISTORY");
  const hits = terms.map((term) => digestHits(digest, term));
  const sums = DIGEST_FIELDS.map(() => 0);
  for (const row of digestGenerations(digest, store.state.cold_current)) {
    part.size++;
    const reasonText = digestReason(digest, row);
    let reason = reasons.get(reasonText);
    if (reason === undefined) {
      reason = { folded: foldField(reasonText), length: foldedLength(reasonText) };
      reasons.set(reasonText, reason);
    }
    let all = true;
    terms.forEach((term, t) => {
      const found = hits[t][row] === 1 || containsTerm(reason.folded, term) ||
        containsTerm(location, term);
      if (found) part.documentFrequency.set(term, part.documentFrequency.get(term)! + 1);
      else all = false;
    });
    if (!all) continue;
    part.matched++;
    addDigestLengths(digest, row, sums);
    part.lengthSums.reason += reason.length;
    part.lengthSums.location += locationLength;
    matches.push(() => {
      const archived = readDigestRow(store.paths, digest, row, months);
      const entry = parseStored(archived.rawLine, `archive record in ${archived.file}`);
      const record = entryRecord(entry, "HISTORY", archived.reason);
      const confirm = () => confirmDigestRow(digest, row, archived);
      return { record, fields: searchFieldsOf(record), confirm };
    });
  }
  DIGEST_FIELDS.forEach((name, i) => (part.lengthSums[name] += sums[i]));
  return { part, matches };
}

/** Searches the store: current, held and historical memory. */
export function searchStore(
  store: Store,
  terms: readonly string[],
  limit = Number.MAX_SAFE_INTEGER,
): { matches: RecallMatch[]; total: number } {
  const { records: current, currentByKey } = currentRecords(store);
  const records = [...current, ...heldRecords(store, currentByKey)];
  const digest = loadHistoryDigest(store.paths);
  const history = digest === null
    ? matchHistory(store, terms)
    : matchHistoryDigest(store, digest, terms);
  return searchFirst(records, terms, 0, limit, history);
}
