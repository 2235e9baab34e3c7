/**
 * Relevance search over current, held and historical memory (`--rank`, and
 * the MCP recall tool's query by default): an entry matches when any query
 * word (stop words dropped, stems folded) occurs in it, or when it holds
 * every term as the default mode requires. Current memory (HOT and COLD)
 * comes first, then held candidates, then history; within each, an exact
 * phrase match, then an all-terms match (what the default mode finds), then
 * the rest, each by BM25F score (relevance.ts), then by key, ID and reason.
 */
import type { Store } from "../store/store.ts";
import { compareCodePoints } from "../model/text.ts";
import { historicalGenerations } from "./archive_read.ts";
import { readAllArchiveRecords } from "../store/archive_month.ts";
import {
  entryRecord,
  type Location,
  parseStored,
  type RecallMatch,
  type RetrievalRecord,
  searchFieldsOf,
} from "./lookup.ts";
import { currentRecords, heldRecords } from "./records.ts";
import { containsTerm, type FoldedText, foldField, termCount } from "./tokenize.ts";
import {
  addDigestLengths,
  DIGEST_FIELDS,
  digestFoldRegion,
  digestGenerations,
  digestKeyAndId,
  digestReason,
  digestRecord,
  type LoadedDigest,
  loadHistoryDigest,
} from "./history_digest.ts";
import {
  countWord,
  MATCH_KIND_ORDER,
  type MatchKind,
  RELEVANCE_FIELDS,
  type RelevanceQuery,
  relevanceScoreFlat,
  type RelevanceStats,
  wordCharAt,
  wordWeight,
} from "./relevance.ts";

/** What the output order compares of a match besides its bucket, kind and score. */
type OrderKey = { key: string; id: string; reason: string };

const KINDS: readonly MatchKind[] = ["phrase", "all", "some"];
const F = RELEVANCE_FIELDS.length;
const BUCKET: Readonly<Record<Location, number>> = { HOT: 0, COLD: 0, HELD: 1, HISTORY: 2 };
/** Positions of RELEVANCE_FIELDS among DIGEST_FIELDS (the digest's field order). */
const DIGEST_COLUMN = RELEVANCE_FIELDS.map((name) => DIGEST_FIELDS.indexOf(name));
/** For each of DIGEST_FIELDS, its position among RELEVANCE_FIELDS, or -1. */
const RELEVANCE_OF_DIGEST = DIGEST_FIELDS.map((name) =>
  (RELEVANCE_FIELDS as readonly string[]).indexOf(name)
);
const TEXT_FIELD = RELEVANCE_FIELDS.indexOf("text");

/**
 * The matches found so far, in flat arrays (a query can match thousands of
 * archived generations; only the printed few become records): per match its
 * bucket, kind, score, word counts by field, field lengths, and what builds it.
 */
class Pool {
  bucket: number[] = [];
  kind: number[] = [];
  score: number[] = [];
  counts: number[] = [];
  lengths: number[] = [];
  source: (RetrievalRecord | number)[] = [];
  constructor(readonly words: number) {}

  get size(): number {
    return this.bucket.length;
  }

  /** Adds a match; its counts and lengths are pushed by the caller, in order, right after. */
  add(bucket: number, kind: MatchKind, source: RetrievalRecord | number): void {
    this.bucket.push(bucket);
    this.kind.push(MATCH_KIND_ORDER[kind]);
    this.score.push(0);
    this.source.push(source);
  }

  /** True when match `i` holds word `w` in some field. */
  holds(i: number, w: number): boolean {
    const at = (i * this.words + w) * F;
    for (let f = 0; f < F; f++) if (this.counts[at + f] > 0) return true;
    return false;
  }
}

/** Adds one record held in memory (current, held, or history read from the archive) if it matches. */
function addRecord(pool: Pool, record: RetrievalRecord, query: RelevanceQuery): void {
  const all = searchFieldsOf(record);
  const folded = RELEVANCE_FIELDS.map((name) => foldField(all[name]).normalized);
  const counts = query.words.flatMap((word) => folded.map((text) => countWord(text, word)));
  const joined = foldField(Object.values(all).join("\n"));
  const holdsAll = query.terms.every((term) => containsTerm(joined, term));
  if (!holdsAll && !counts.some((n) => n > 0)) return;
  const phrase = holdsAll && query.phrase !== null &&
    Object.values(all).some((value) => containsTerm(foldField(value), query.phrase!));
  pool.add(BUCKET[record.location], phrase ? "phrase" : holdsAll ? "all" : "some", record);
  pool.counts.push(...counts);
  pool.lengths.push(...folded.map(termCount));
}

/**
 * The historical generations that match, found through the history digest
 * without reading the archive, and what they add to the corpus statistics.
 */
type DigestMatches = {
  /** Historical generations in the corpus. */
  size: number;
  /** The matching rows. */
  rows: number[];
  /** Bit w: the row holds query word w. */
  hits: Uint32Array;
  /** Rows that match by holding every term, without any query word. */
  termsOnly: Set<number>;
  df: number[];
  lengthSums: number[];
};

/**
 * Finds the matching generations with one substring scan of the digest per
 * query word (each found word checked whole, by stem); reads only the
 * lengths of the matching rows. Counting each word by field is left to
 * addDigestRows, needed only when history reaches the printed matches.
 */
function matchDigest(store: Store, digest: LoadedDigest, query: RelevanceQuery): DigestMatches {
  const generations = digestGenerations(digest, store.state.cold_current);
  const { text, starts } = digest;
  const lines = starts.length - 1;
  const isGeneration = new Uint8Array(lines);
  for (const row of generations) isGeneration[row] = 1;
  // Per row, where the key-to-falsifier part of each folded text lies: the cells before it hold
  // IDs, offsets and counts, and trust and source follow it. Worked out for rows a probe hits.
  const spans = new Int32Array(lines * 4).fill(-1);
  const spanOf = (row: number): number => {
    if (spans[row * 4] < 0) {
      const lineEnd = starts[row + 1] - 1;
      const normalizedStart = text.lastIndexOf("\t", lineEnd - 1) + 1;
      const plainStart = text.lastIndexOf("\t", normalizedStart - 2) + 1;
      spans[row * 4] = plainStart;
      spans[row * 4 + 1] = relevantEnd(text, plainStart, normalizedStart - 1);
      spans[row * 4 + 2] = normalizedStart;
      spans[row * 4 + 3] = relevantEnd(text, normalizedStart, lineEnd);
    }
    return row * 4;
  };
  const hits = new Uint32Array(lines);
  const probed = new Uint8Array(lines);
  query.words.forEach((word, w) => {
    const bit = 1 << w;
    const seen = new Map<string, number>();
    let row = 0;
    for (let at = text.indexOf(word.probe); at !== -1;) {
      while (starts[row + 1] <= at) row++;
      const next = starts[row + 1];
      if (isGeneration[row] === 0 || (hits[row] & bit) !== 0) {
        at = next < text.length ? text.indexOf(word.probe, next) : -1;
        continue;
      }
      const span = spanOf(row);
      if (at < spans[span]) {
        at = text.indexOf(word.probe, spans[span]);
        continue;
      }
      if (w === 0) probed[row] = 1;
      const relevant = at < spans[span + 1] || (at >= spans[span + 2] && at < spans[span + 3]);
      if (!relevant) {
        at = text.indexOf(word.probe, at + 1);
        continue;
      }
      let found = !word.byWord;
      if (!found && !wordCharAt(text, at - 1)) {
        let stop = at + word.probe.length;
        while (stop < next && wordCharAt(text, stop)) stop++;
        // The query's own word needs no stemming (nor a copy of the word to look it up).
        found = (stop - at === word.term.length && text.startsWith(word.term, at)) ||
          wordWeight(word, text.slice(at, stop), seen) > 0;
      }
      if (found) {
        hits[row] |= bit;
        at = next < text.length ? text.indexOf(word.probe, next) : -1;
      } else at = text.indexOf(word.probe, at + 1);
    }
  });
  const location = foldField("HISTORY");
  const first = query.words[0];
  const firstInLocation = containsTerm(location, first.term);
  const firstInReason = new Map<string, boolean>();
  const rows: number[] = [];
  const termsOnly = new Set<number>();
  const df = query.words.map(() => 0);
  const lengthSums = RELEVANCE_FIELDS.map(() => 0);
  const sums = DIGEST_FIELDS.map(() => 0);
  for (const row of generations) {
    if (hits[row] === 0) {
      // An all-terms match holds the first word's term, so its probe, in its fold, reason or location.
      if (probed[row] === 0 && !firstInLocation) {
        const reasonText = digestReason(digest, row);
        let inReason = firstInReason.get(reasonText);
        if (inReason === undefined) {
          inReason = containsTerm(foldField(reasonText), first.term);
          firstInReason.set(reasonText, inReason);
        }
        if (!inReason) continue;
      }
      if (!holdsAllTerms(digest, row, query, location)) continue;
      termsOnly.add(row);
    }
    rows.push(row);
    for (let w = 0; w < query.words.length; w++) if ((hits[row] & (1 << w)) !== 0) df[w]++;
    sums.fill(0);
    addDigestLengths(digest, row, sums);
    DIGEST_COLUMN.forEach((column, f) => (lengthSums[f] += sums[column]));
  }
  return { size: generations.length, rows, hits, termsOnly, df, lengthSums };
}

/**
 * Where the searched fields of a folded text from `start` to `end` end: at
 * the separator after the falsifier (trust and source, the last two fields,
 * follow it), or at `end` when the text is not laid out by field (all of it
 * then counts as text).
 */
function relevantEnd(text: string, start: number, end: number): number {
  if (start >= end) return end;
  const beforeSource = text.lastIndexOf("\u001f", end - 1);
  if (beforeSource < start) return end;
  const beforeTrust = text.lastIndexOf("\u001f", beforeSource - 1);
  return beforeTrust < start ? end : beforeTrust;
}

/** The default mode's rule for a digest row: every term in its folds, its reason or its location. */
function holdsAllTerms(
  digest: LoadedDigest,
  row: number,
  query: RelevanceQuery,
  location: FoldedText,
): boolean {
  const region = digestFoldRegion(digest, row);
  const fold = digest.text.slice(region.foldStart, region.foldEnd);
  let reason: FoldedText | null = null;
  return query.terms.every((term) => {
    if (fold.includes(term) || containsTerm(location, term)) return true;
    reason ??= foldField(digestReason(digest, row));
    return containsTerm(reason, term);
  });
}

/** Adds the matching digest rows to the pool, each word counted by field, each kind decided. */
function addDigestRows(
  pool: Pool,
  digest: LoadedDigest,
  query: RelevanceQuery,
  found: DigestMatches,
) {
  const { text } = digest;
  const location = foldField("HISTORY");
  const seen = query.words.map(() => new Map<string, number>());
  const counts = new Array<number>(query.words.length * F);
  const sums = DIGEST_FIELDS.map(() => 0);
  for (const row of found.rows) {
    const region = digestFoldRegion(digest, row);
    // Scanned as its own string, so no search runs past the row.
    const own = text.slice(region.start, region.end);
    const ends = region.ends?.map((end) => end - region.start) ?? null;
    counts.fill(0);
    query.words.forEach((word, w) => {
      if ((found.hits[row] & (1 << w)) === 0) return;
      if (!word.byWord) {
        if (ends === null) {
          counts[w * F + TEXT_FIELD] = countWord(own, word);
          return;
        }
        DIGEST_COLUMN.forEach((column, f) => {
          counts[w * F + f] = countWord(
            own,
            word,
            column === 0 ? 0 : ends[column - 1] + 1,
            ends[column],
          );
        });
        return;
      }
      let field = 0;
      for (let at = own.indexOf(word.probe); at !== -1;) {
        let stop = at + word.probe.length;
        if (at > 0 && wordCharAt(own, at - 1)) {
          at = own.indexOf(word.probe, at + 1);
          continue;
        }
        while (stop < own.length && wordCharAt(own, stop)) stop++;
        const weight = wordWeight(word, own.slice(at, stop), seen[w]);
        if (weight > 0) {
          let f = TEXT_FIELD;
          if (ends !== null) {
            while (at >= ends[field]) field++;
            f = RELEVANCE_OF_DIGEST[field];
          }
          if (f >= 0) counts[w * F + f] += weight;
        }
        at = own.indexOf(word.probe, stop);
      }
    });
    const holdsAll = found.termsOnly.has(row) || holdsAllTerms(digest, row, query, location);
    const phrase = holdsAll && query.phrase !== null &&
      text.slice(region.foldStart, region.foldEnd).includes(query.phrase);
    pool.add(BUCKET.HISTORY, phrase ? "phrase" : holdsAll ? "all" : "some", row);
    for (const n of counts) pool.counts.push(n);
    sums.fill(0);
    addDigestLengths(digest, row, sums);
    for (const column of DIGEST_COLUMN) pool.lengths.push(sums[column]);
  }
}

/** Adds the historical generations that match by reading the archive (when the digest does not vouch for it). */
function addArchiveRows(pool: Pool, store: Store, query: RelevanceQuery): number {
  const rows = historicalGenerations(readAllArchiveRecords(store.paths), store.state.cold_current);
  for (const row of rows) {
    // Any match holds some word's probe (an all-terms match holds every term, so every probe).
    const haystack = foldField(`${row.rawLine}\n${row.reason}\nHISTORY`);
    if (!query.words.some((word) => containsTerm(haystack, word.probe))) continue;
    const entry = parseStored(row.rawLine, `archive record in ${row.file}`);
    addRecord(pool, entryRecord(entry, "HISTORY", row.reason), query);
  }
  return rows.length;
}

/**
 * Relevance search of the store: the first `limit` matches in output order,
 * each with its score, the query words it matched and how it matched, and
 * the total number of matches.
 */
export function searchRanked(
  store: Store,
  query: RelevanceQuery,
  limit: number,
): { matches: RecallMatch[]; total: number } {
  const { records: current, currentByKey } = currentRecords(store);
  const records = [...current, ...heldRecords(store, currentByKey)];
  const words = query.words.length;
  const pool = new Pool(words);
  for (const record of records) addRecord(pool, record, query);
  const digest = loadHistoryDigest(store.paths);
  let stats: RelevanceStats;
  let total: number;
  if (digest === null) {
    const history = addArchiveRows(pool, store, query);
    stats = corpusStats(pool, records.length + history, null);
    total = pool.size;
  } else {
    const found = matchDigest(store, digest, query);
    stats = corpusStats(pool, records.length + found.size, found);
    total = pool.size + found.rows.length;
    // History comes after current and held memory: count it in detail only if it gets printed.
    if (pool.size < limit) addDigestRows(pool, digest, query, found);
  }
  for (let i = 0; i < pool.size; i++) {
    pool.score[i] = relevanceScoreFlat(
      pool.counts,
      i * words * F,
      pool.lengths,
      i * F,
      words,
      stats,
    );
  }
  const built = new Map<number, RetrievalRecord>();
  const build = (i: number): RetrievalRecord => {
    const source = pool.source[i];
    if (typeof source !== "number") return source;
    let record = built.get(i);
    if (record === undefined) built.set(i, record = digestRecord(store, digest!, source));
    return record;
  };
  const order = (i: number): OrderKey => {
    const source = pool.source[i];
    if (typeof source !== "number") return source;
    const keyAndId = digestKeyAndId(digest!, source);
    return keyAndId === null ? build(i) : { ...keyAndId, reason: digestReason(digest!, source) };
  };
  // Order by the numbers first: every match after the first `limit` and their ties is
  // strictly later, so only those need their key, ID and reason (reading them for every
  // history match would cost the most).
  const primary = (a: number, b: number) =>
    pool.bucket[a] - pool.bucket[b] || pool.kind[a] - pool.kind[b] ||
    pool.score[b] - pool.score[a];
  const indices = Array.from({ length: pool.size }, (_, i) => i).sort(primary);
  let end = Math.min(limit, indices.length);
  while (end > 0 && end < indices.length && primary(indices[end - 1], indices[end]) === 0) end++;
  const ordered = indices.slice(0, end).map((i) => ({ i, order: order(i) }));
  ordered.sort((a, b) =>
    primary(a.i, b.i) ||
    compareCodePoints(a.order.key, b.order.key) ||
    compareCodePoints(a.order.id, b.order.id) ||
    compareCodePoints(a.order.reason, b.order.reason)
  );
  const matches = ordered.slice(0, limit).map(({ i }) => ({
    ...build(i),
    score: pool.score[i],
    matched: query.words.filter((_, w) => pool.holds(i, w)).map((word) => word.term),
    match: KINDS[pool.kind[i]],
  }));
  return { matches, total };
}

/**
 * Document frequencies over the matches, average field lengths of the
 * matches, corpus size; `history` adds the digest's matches (not in the pool).
 */
function corpusStats(pool: Pool, size: number, history: DigestMatches | null): RelevanceStats {
  const df = history?.df.slice() ?? Array.from({ length: pool.words }, () => 0);
  const sums = history?.lengthSums.slice() ?? RELEVANCE_FIELDS.map(() => 0);
  for (let i = 0; i < pool.size; i++) {
    for (let w = 0; w < pool.words; w++) if (pool.holds(i, w)) df[w]++;
    for (let f = 0; f < F; f++) sums[f] += pool.lengths[i * F + f];
  }
  const count = Math.max(pool.size + (history?.rows.length ?? 0), 1);
  return { size, df, averageLength: sums.map((sum) => Math.max(sum / count, 1)) };
}
