/**
 * Task-language search over current, held and historical memory: the HOT,
 * COLD and HELD records from the store, HISTORY from the derived history
 * digest or, when it does not vouch for the archive, from the archive itself.
 * The CLI's default mode (every term must occur, the reference's order:
 * group, then key, id, reason). `--rank` does not come here: it is the
 * relevance search of ranked_search.ts. The in-group BM25F ordering this
 * module can still apply (`ranked`, ranking.ts) is the earlier `--rank`,
 * no longer reached by any command.
 */
import type { Store } from "../store/store.ts";
import {
  addToCorpus,
  type CorpusPart,
  type CorpusStats,
  foldedLength,
  matchDocuments,
  newCorpusPart,
  rankDocuments,
  scoreCounts,
  scoreMatch,
  type SearchField,
} from "./ranking.ts";
import { historicalGenerations } from "./archive_read.ts";
import { readAllArchiveRecords } from "../store/archive_month.ts";
import {
  currentRecords,
  entryRecord,
  heldRecords,
  LOCATIONS,
  parseStored,
  type RetrievalRecord,
  searchFieldsOf,
} from "./records.ts";
import { containsTerm, countTerm, type FoldedText, foldField, queryTerms } from "./tokenize.ts";
import {
  addDigestLengths,
  confirmDigestRow,
  DIGEST_FIELDS,
  digestGenerations,
  digestHits,
  digestKeyAndId,
  digestReason,
  digestTermCounts,
  type LoadedDigest,
  loadHistoryDigest,
  readDigestRow,
} from "./history_digest.ts";
import { byGroupScoreAndKey, compareRanked, type RankKey, type RecallMatch } from "./recall.ts";

export { queryTerms };

/**
 * Matches of `terms` among `records` (every term must occur; see
 * tokenize.ts), ranked unless `ranked` is false (then every score is 0).
 * `background` counts further corpus documents known to contain none of the
 * terms: they only enlarge the corpus for IDF.
 */
export function searchRecords(
  records: readonly RetrievalRecord[],
  terms: readonly string[],
  background = 0,
  ranked = true,
): RecallMatch[] {
  return rankDocuments(records.map(searchFieldsOf), terms, background)
    .map(({ index, score }) => ({ ...records[index], score: ranked ? score : 0 }))
    .sort(byGroupScoreAndKey);
}

/**
 * A matched history generation: what orders it, its score once the corpus
 * statistics are known, and how to build its printed record (which throws
 * when the archive no longer holds what the match was decided on).
 */
export type HistoryCandidate = {
  rank: () => RankKey;
  score: (stats: CorpusStats) => number;
  build: () => RetrievalRecord;
};

/**
 * History generations that match a query, with their share of the corpus
 * statistics. Only the printed ones are built.
 */
export type HistoryMatches = {
  part: CorpusPart;
  /** How many generations match. */
  count: number;
  /** The matches in archive order, made on demand (most searches never print history). */
  candidates: () => Iterable<HistoryCandidate>;
};

/**
 * The first `limit` matches (output order) and the total. Groups come first in
 * the order, so only the groups that reach into the first `limit` are scored;
 * the others are only counted (same result as sorting all). `history`, when
 * given, holds the HISTORY group already matched. Unless `ranked`, nothing is
 * scored: every score is 0 and the order is the reference's.
 */
export function searchFirst(
  records: readonly RetrievalRecord[],
  terms: readonly string[],
  background: number,
  limit: number,
  history: HistoryMatches | null = null,
  ranked = true,
): { matches: RecallMatch[]; total: number } {
  const fields = records.map(searchFieldsOf);
  const { matched, stats } = matchDocuments(fields, terms, background, history?.part ?? null);
  const matches: RecallMatch[] = [];
  let before = 0;
  for (const location of LOCATIONS) {
    const group = matched.filter((index) => records[index].location === location);
    const pending = location === "HISTORY" && history ? history : null;
    const pendingCount = pending?.count ?? 0;
    if (before < limit && group.length + pendingCount > 0) {
      // Rank light {rank, score} pairs; only the printed ones become records.
      const top = new FirstRanked<RetrievalRecord | HistoryCandidate>(limit - matches.length);
      for (const index of group) {
        const score = ranked ? scoreMatch(fields[index], terms, stats) : 0;
        top.offer(records[index], score, records[index]);
      }
      for (const candidate of pending?.candidates() ?? []) {
        top.offer(candidate.rank(), ranked ? candidate.score(stats) : 0, candidate);
      }
      for (const { score, item } of top.first()) {
        const record = "build" in item ? item.build() : item;
        matches.push({ ...record, score });
      }
    }
    before += group.length + pendingCount;
  }
  return {
    matches: matches.slice(0, limit),
    total: matched.length + (history?.count ?? 0),
  };
}

/**
 * The first `room` of a stream of scored items, exactly as a stable sort of
 * the whole stream would order them, holding at most about twice `room` at a
 * time: a query can match thousands of archived generations, and only the
 * printed few need more than their rank and score.
 */
class FirstRanked<T> {
  #kept: { rank: RankKey; score: number; item: T }[] = [];
  constructor(private readonly room: number) {}

  /** Adds the next item of the stream. */
  offer(rank: RankKey, score: number, item: T): void {
    if (this.room <= 0) return;
    this.#kept.push({ rank, score, item });
    if (this.#kept.length >= 2 * this.room + 64) this.#trim();
  }

  /** The first `room` items in rank order. */
  first(): { score: number; item: T }[] {
    this.#trim();
    return this.#kept;
  }

  // A stable sort keeps ties in stream order: kept items came before the
  // ones appended after them, and among themselves they are already in order.
  #trim(): void {
    this.#kept.sort((a, b) => compareRanked(a.rank, a.score, b.rank, b.score));
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
  const matches: HistoryCandidate[] = [];
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
    if (addToCorpus(part, fields, terms)) {
      matches.push({
        rank: () => record,
        score: (stats) => scoreMatch(fields, terms, stats),
        build: () => record,
      });
    }
  }
  return { part, count: matches.length, candidates: () => matches };
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
  const matched: number[] = [];
  const reasons = new Map<string, { folded: FoldedText; length: number }>();
  const location = foldField("HISTORY");
  const locationLength = foldedLength("HISTORY");
  const hits = terms.map((term) => digestHits(digest, term));
  const sums = DIGEST_FIELDS.map(() => 0);
  const termIndex = new Map(terms.map((term, t) => [term, t]));
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
    matched.push(row);
  }
  DIGEST_FIELDS.forEach((name, i) => (part.lengthSums[name] += sums[i]));
  const candidate = (row: number): HistoryCandidate => {
    const reasonText = digestReason(digest, row);
    const reason = reasons.get(reasonText)!;
    // Built only when printed, or to be ranked at all when the digest does not lay out its fields.
    let built: RetrievalRecord | null = null;
    const build = () => built ??= digestRecord(store, digest, row);
    return {
      rank: () => {
        const keyAndId = digestKeyAndId(digest, row);
        return keyAndId === null
          ? build()
          : { location: "HISTORY", ...keyAndId, reason: reasonText };
      },
      score: (stats) => {
        const counts = digestTermCounts(digest, row, terms);
        if (counts === null) return scoreMatch(searchFieldsOf(build()), terms, stats);
        const fieldLengths = DIGEST_FIELDS.map(() => 0);
        addDigestLengths(digest, row, fieldLengths);
        const lengths = { reason: reason.length, location: locationLength } as Record<
          SearchField,
          number
        >;
        DIGEST_FIELDS.forEach((name, f) => (lengths[name] = fieldLengths[f]));
        return scoreCounts(
          (name, term) => {
            const f = FIELD_COLUMN.get(name);
            if (f !== undefined) return counts[termIndex.get(term)!][f];
            return countTerm(name === "reason" ? reason.folded : location, term);
          },
          lengths,
          terms,
          stats,
        );
      },
      build,
    };
  };
  return {
    part,
    count: matched.length,
    candidates: function* () {
      for (const row of matched) yield candidate(row);
    },
  };
}

/**
 * The printed record of a digest row, read back from its month file and
 * checked against the digest (throws when the archive changed underneath).
 */
export function digestRecord(store: Store, digest: LoadedDigest, row: number): RetrievalRecord {
  const archived = readDigestRow(store.paths, digest, row);
  const entry = parseStored(archived.rawLine, `archive record in ${archived.file}`);
  confirmDigestRow(digest, row, archived);
  return entryRecord(entry, "HISTORY", archived.reason);
}

/** Column of each digest field in digestTermCounts' rows. */
const FIELD_COLUMN = new Map<SearchField, number>(DIGEST_FIELDS.map((name, f) => [name, f]));

/** Searches the store: current, held and historical memory (ranked unless `ranked` is false). */
export function searchStore(
  store: Store,
  terms: readonly string[],
  limit = Number.MAX_SAFE_INTEGER,
  ranked = true,
): { matches: RecallMatch[]; total: number } {
  const { records: current, currentByKey } = currentRecords(store);
  const records = [...current, ...heldRecords(store, currentByKey)];
  const digest = loadHistoryDigest(store.paths);
  const history = digest === null
    ? matchHistory(store, terms)
    : matchHistoryDigest(store, digest, terms);
  return searchFirst(records, terms, 0, limit, history, ranked);
}
