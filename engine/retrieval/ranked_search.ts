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
import { historicalGenerations, readAllArchiveRecords } from "./archive_read.ts";
import {
  currentRecords,
  entryRecord,
  heldRecords,
  type Location,
  parseStored,
  type RetrievalRecord,
  searchFieldsOf,
} from "./records.ts";
import { containsTerm, type FoldedText, foldField, termCount } from "./tokenize.ts";
import {
  addDigestLengths,
  DIGEST_FIELDS,
  digestFoldRegion,
  digestGenerations,
  digestHits,
  digestKeyAndId,
  digestReason,
  type LoadedDigest,
  loadHistoryDigest,
} from "./history_digest.ts";
import {
  countWord,
  MATCH_KIND_ORDER,
  type MatchKind,
  RELEVANCE_FIELDS,
  type RelevanceQuery,
  relevanceScore,
  type RelevanceStats,
} from "./relevance.ts";
import type { RecallMatch } from "./recall.ts";
import { digestRecord } from "./search.ts";

/** What the output order compares of a match besides its bucket, kind and score. */
type OrderKey = { key: string; id: string; reason: string };

/** One matching entry before it is printed. */
type Candidate = {
  /** 0 current (HOT, COLD), 1 held, 2 history. */
  bucket: number;
  kind: MatchKind;
  /** counts[w][f]: occurrences of query word w in RELEVANCE_FIELDS[f]. */
  counts: number[][];
  lengths: number[];
  score: number;
  order: () => OrderKey;
  build: () => RetrievalRecord;
};

const BUCKET: Readonly<Record<Location, number>> = { HOT: 0, COLD: 0, HELD: 1, HISTORY: 2 };

/** Positions of RELEVANCE_FIELDS among DIGEST_FIELDS (the digest's field order). */
const DIGEST_COLUMN = RELEVANCE_FIELDS.map((name) => DIGEST_FIELDS.indexOf(name));

/** True when any count is above zero. */
function anyHit(counts: readonly (readonly number[])[]): boolean {
  return counts.some((byField) => byField.some((n) => n > 0));
}

/** Matches one record held in memory (current, held, or history read from the archive). */
function recordCandidate(record: RetrievalRecord, query: RelevanceQuery): Candidate | null {
  const all = searchFieldsOf(record);
  const folded = RELEVANCE_FIELDS.map((name) => foldField(all[name]).normalized);
  const counts = query.words.map((word) => folded.map((text) => countWord(text, word)));
  const joined = foldField(Object.values(all).join("\n"));
  const holdsAll = query.terms.every((term) => containsTerm(joined, term));
  if (!holdsAll && !anyHit(counts)) return null;
  const phrase = holdsAll && query.phrase !== null &&
    Object.values(all).some((value) => containsTerm(foldField(value), query.phrase!));
  return {
    bucket: BUCKET[record.location],
    kind: phrase ? "phrase" : holdsAll ? "all" : "some",
    counts,
    lengths: folded.map(termCount),
    score: 0,
    order: () => record,
    build: () => record,
  };
}

/** Matches the historical generations through the history digest, without reading the archive. */
function digestCandidates(
  store: Store,
  digest: LoadedDigest,
  query: RelevanceQuery,
): { size: number; candidates: Candidate[] } {
  const rows = digestGenerations(digest, store.state.cold_current);
  const isGeneration = new Uint8Array(digest.starts.length);
  for (const row of rows) isGeneration[row] = 1;
  const { text, starts } = digest;
  // Rows holding any word's probe get that word counted field by field.
  const counts = new Map<number, number[][]>();
  query.words.forEach((word, w) => {
    let row = 0;
    for (let at = text.indexOf(word.probe); at !== -1;) {
      while (starts[row + 1] <= at) row++;
      if (isGeneration[row] === 0) {
        at = row + 1 < starts.length - 1 ? text.indexOf(word.probe, starts[row + 1]) : -1;
        continue;
      }
      const region = digestFoldRegion(digest, row);
      if (at < region.start) {
        at = text.indexOf(word.probe, region.start);
        continue;
      }
      if (at < region.end) {
        let byWord = counts.get(row);
        if (byWord === undefined) {
          byWord = query.words.map(() => RELEVANCE_FIELDS.map(() => 0));
          counts.set(row, byWord);
        }
        if (region.ends === null) {
          // Not laid out by field: every hit counts as text.
          byWord[w][RELEVANCE_FIELDS.indexOf("text")] = countWord(
            text,
            word,
            region.start,
            region.end,
          );
        } else {
          const ends = region.ends;
          DIGEST_COLUMN.forEach((column, f) => {
            const from = column === 0 ? region.start : ends[column - 1] + 1;
            byWord[w][f] = countWord(text, word, from, ends[column]);
          });
        }
      }
      at = row + 1 < starts.length - 1 ? text.indexOf(word.probe, starts[row + 1]) : -1;
    }
  });
  // The default mode's rule: every term in the row's fields, its reason or its location.
  const hits = query.terms.map((term) => digestHits(digest, term));
  const phraseHits = query.phrase === null ? null : digestHits(digest, query.phrase);
  const location = foldField("HISTORY");
  const reasons = new Map<string, FoldedText>();
  const candidates: Candidate[] = [];
  for (const row of rows) {
    const byWord = counts.get(row);
    const reasonText = digestReason(digest, row);
    let reason = reasons.get(reasonText);
    if (reason === undefined) reasons.set(reasonText, reason = foldField(reasonText));
    const folded = reason;
    const holdsAll = query.terms.every((term, t) =>
      hits[t][row] === 1 || containsTerm(folded, term) || containsTerm(location, term)
    );
    if (!holdsAll && !(byWord !== undefined && anyHit(byWord))) continue;
    const sums = DIGEST_FIELDS.map(() => 0);
    addDigestLengths(digest, row, sums);
    let built: RetrievalRecord | null = null;
    const build = () => built ??= digestRecord(store, digest, row);
    candidates.push({
      bucket: BUCKET.HISTORY,
      kind: phraseHits !== null && phraseHits[row] === 1 ? "phrase" : holdsAll ? "all" : "some",
      counts: byWord ?? query.words.map(() => RELEVANCE_FIELDS.map(() => 0)),
      lengths: DIGEST_COLUMN.map((column) => sums[column]),
      score: 0,
      order: () => {
        const keyAndId = digestKeyAndId(digest, row);
        return keyAndId === null ? build() : { ...keyAndId, reason: reasonText };
      },
      build,
    });
  }
  return { size: rows.length, candidates };
}

/** Matches the historical generations by reading the archive (when the digest does not vouch for it). */
function archiveCandidates(
  store: Store,
  query: RelevanceQuery,
): { size: number; candidates: Candidate[] } {
  const rows = historicalGenerations(readAllArchiveRecords(store.paths), store.state.cold_current);
  const candidates: Candidate[] = [];
  for (const row of rows) {
    // Any match holds some word's probe (an all-terms match holds every term, so every probe).
    const haystack = foldField(`${row.rawLine}\n${row.reason}\nHISTORY`);
    if (!query.words.some((word) => containsTerm(haystack, word.probe))) continue;
    const entry = parseStored(row.rawLine, `archive record in ${row.file}`);
    const candidate = recordCandidate(entryRecord(entry, "HISTORY", row.reason), query);
    if (candidate !== null) candidates.push(candidate);
  }
  return { size: rows.length, candidates };
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
  const candidates: Candidate[] = [];
  for (const record of records) {
    const candidate = recordCandidate(record, query);
    if (candidate !== null) candidates.push(candidate);
  }
  const digest = loadHistoryDigest(store.paths);
  const history = digest === null
    ? archiveCandidates(store, query)
    : digestCandidates(store, digest, query);
  candidates.push(...history.candidates);
  const stats = corpusStats(candidates, records.length + history.size, query.words.length);
  for (const candidate of candidates) {
    candidate.score = relevanceScore(candidate.counts, candidate.lengths, stats);
  }
  // Order by the numbers first: every match after the first `limit` and their ties is
  // strictly later, so only those need their key, ID and reason (reading them for every
  // history match would cost the most).
  const primary = (a: Candidate, b: Candidate) =>
    a.bucket - b.bucket || MATCH_KIND_ORDER[a.kind] - MATCH_KIND_ORDER[b.kind] || b.score - a.score;
  candidates.sort(primary);
  let end = Math.min(limit, candidates.length);
  while (
    end > 0 && end < candidates.length && primary(candidates[end - 1], candidates[end]) === 0
  ) {
    end++;
  }
  const ordered = candidates.slice(0, end)
    .map((candidate) => ({ candidate, order: candidate.order() }));
  ordered.sort((a, b) =>
    primary(a.candidate, b.candidate) ||
    compareCodePoints(a.order.key, b.order.key) ||
    compareCodePoints(a.order.id, b.order.id) ||
    compareCodePoints(a.order.reason, b.order.reason)
  );
  const matches = ordered.slice(0, limit).map(({ candidate }) => ({
    ...candidate.build(),
    score: candidate.score,
    matched: query.words.filter((_, w) => candidate.counts[w].some((n) => n > 0)).map((word) =>
      word.term
    ),
    match: candidate.kind,
  }));
  return { matches, total: candidates.length };
}

/** Document frequencies over the matches, average field lengths of the matches, corpus size. */
function corpusStats(
  candidates: readonly Candidate[],
  size: number,
  words: number,
): RelevanceStats {
  const df = Array.from({ length: words }, () => 0);
  const sums = RELEVANCE_FIELDS.map(() => 0);
  for (const candidate of candidates) {
    candidate.counts.forEach((byField, w) => {
      if (byField.some((n) => n > 0)) df[w]++;
    });
    candidate.lengths.forEach((length, f) => (sums[f] += length));
  }
  const count = Math.max(candidates.length, 1);
  return { size, df, averageLength: sums.map((sum) => Math.max(sum / count, 1)) };
}
