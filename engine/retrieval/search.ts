/**
 * Task-language search over current, held and historical memory (the CLI's
 * default mode): every term must occur, and matches come in the reference's
 * order (group, then key, id, reason). HOT, COLD and HELD records come from
 * the store, HISTORY from the derived history digest or, when it does not
 * vouch for the archive, from the archive itself. `--rank` does not come
 * here: it is the relevance search of ranked_search.ts.
 */
import type { Store } from "../store/store.ts";
import { historicalGenerations } from "./archive_read.ts";
import { readAllArchiveRecords } from "../store/archive_month.ts";
import { currentRecords, heldRecords } from "./records.ts";
import {
  compareOrder,
  entryRecord,
  LOCATIONS,
  type OrderKey,
  parseStored,
  type RecallMatch,
  type RetrievalRecord,
  searchFieldsOf,
} from "./lookup.ts";
import {
  containsTerm,
  type FoldedText,
  foldField,
  holdsEveryTerm,
  queryTerms,
} from "./tokenize.ts";
import {
  digestGenerations,
  digestHits,
  digestKeyAndId,
  digestReason,
  digestRecord,
  type LoadedDigest,
  loadHistoryDigest,
} from "./history_digest.ts";

export { queryTerms };

/**
 * A matched history generation: what orders it, and how to build its printed
 * record (which throws when the archive no longer holds what the match was
 * decided on).
 */
export type HistoryCandidate = {
  order: () => OrderKey;
  build: () => RetrievalRecord;
};

/** History generations that match a query. Only the printed ones are built. */
export type HistoryMatches = {
  /** How many generations match. */
  count: number;
  /** The matches in archive order, made on demand (most searches never print history). */
  candidates: () => Iterable<HistoryCandidate>;
};

/**
 * The first `limit` matches (output order) and the total. Groups come first in
 * the order, so only the groups that reach into the first `limit` are ordered;
 * the others are only counted (same result as sorting all). `history`, when
 * given, holds the HISTORY group already matched. Every score is 0.
 */
export function searchFirst(
  records: readonly RetrievalRecord[],
  terms: readonly string[],
  limit: number,
  history: HistoryMatches | null = null,
): { matches: RecallMatch[]; total: number } {
  const matched = records.filter((record) => holdsEveryTerm(searchFieldsOf(record), terms));
  const matches: RecallMatch[] = [];
  let before = 0;
  for (const location of LOCATIONS) {
    const group = matched.filter((record) => record.location === location);
    const pending = location === "HISTORY" && history ? history : null;
    const pendingCount = pending?.count ?? 0;
    if (before < limit && group.length + pendingCount > 0) {
      // Order light keys; only the printed ones become records.
      const top = new FirstInOrder<RetrievalRecord | HistoryCandidate>(limit - matches.length);
      for (const record of group) top.offer(record, record);
      for (const candidate of pending?.candidates() ?? []) top.offer(candidate.order(), candidate);
      for (const item of top.first()) {
        const record = "build" in item ? item.build() : item;
        matches.push({ ...record, score: 0 });
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
 * The first `room` of a stream of items, exactly as a stable sort of the
 * whole stream would order them, holding at most about twice `room` at a
 * time: a query can match thousands of archived generations, and only the
 * printed few need more than their order key.
 */
class FirstInOrder<T> {
  #kept: { order: OrderKey; item: T }[] = [];
  constructor(private readonly room: number) {}

  /** Adds the next item of the stream. */
  offer(order: OrderKey, item: T): void {
    if (this.room <= 0) return;
    this.#kept.push({ order, item });
    if (this.#kept.length >= 2 * this.room + 64) this.#trim();
  }

  /** The first `room` items in order. */
  first(): T[] {
    this.#trim();
    return this.#kept.map(({ item }) => item);
  }

  // A stable sort keeps ties in stream order: kept items came before the
  // ones appended after them, and among themselves they are already in order.
  #trim(): void {
    this.#kept.sort((a, b) => compareOrder(a.order, b.order));
    if (this.#kept.length > this.room) this.#kept.length = this.room;
  }
}

/**
 * Matches the historical generations of the archive against `terms`. A row
 * whose raw line (with its reason and location) holds none of the terms
 * cannot match, so it is never parsed.
 */
export function matchHistory(store: Store, terms: readonly string[]): HistoryMatches {
  const matches: RetrievalRecord[] = [];
  const rows = historicalGenerations(
    readAllArchiveRecords(store.paths),
    store.state.cold_current,
  );
  for (const row of rows) {
    const haystack = foldField(`${row.rawLine}\n${row.reason}\nHISTORY`);
    if (!terms.some((term) => containsTerm(haystack, term))) continue;
    const entry = parseStored(row.rawLine, `archive record in ${row.file}`);
    const record = entryRecord(entry, "HISTORY", row.reason);
    if (holdsEveryTerm(searchFieldsOf(record), terms)) matches.push(record);
  }
  return {
    count: matches.length,
    candidates: () => matches.map((record) => ({ order: () => record, build: () => record })),
  };
}

/**
 * matchHistory from the derived history digest: the same generations and the
 * same matches, without reading or parsing the archive; only printed matches
 * are read back from their month file.
 */
export function matchHistoryDigest(
  store: Store,
  digest: LoadedDigest,
  terms: readonly string[],
): HistoryMatches {
  const matched: number[] = [];
  const reasons = new Map<string, FoldedText>();
  const location = foldField("HISTORY");
  const hits = terms.map((term) => digestHits(digest, term));
  for (const row of digestGenerations(digest, store.state.cold_current)) {
    const reasonText = digestReason(digest, row);
    let reason = reasons.get(reasonText);
    if (reason === undefined) {
      reason = foldField(reasonText);
      reasons.set(reasonText, reason);
    }
    const folded = reason;
    const all = terms.every((term, t) =>
      hits[t][row] === 1 || containsTerm(folded, term) || containsTerm(location, term)
    );
    if (all) matched.push(row);
  }
  const candidate = (row: number): HistoryCandidate => {
    const reasonText = digestReason(digest, row);
    // Built only when printed, or to be ordered at all when the digest does not lay out its fields.
    let built: RetrievalRecord | null = null;
    const build = () => built ??= digestRecord(store, digest, row);
    return {
      order: () => {
        const keyAndId = digestKeyAndId(digest, row);
        return keyAndId === null
          ? build()
          : { location: "HISTORY", ...keyAndId, reason: reasonText };
      },
      build,
    };
  };
  return {
    count: matched.length,
    candidates: function* () {
      for (const row of matched) yield candidate(row);
    },
  };
}

/** Searches the store: current, held and historical memory, the first `limit` matches and the total. */
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
  return searchFirst(records, terms, limit, history);
}
