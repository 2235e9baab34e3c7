/**
 * The default mode's matching (every term a substring of the folded fields)
 * with its corpus statistics, and the field-weighted BM25 (BM25F) that once
 * ordered those matches within each group for `--rank`. `--rank` is now the
 * relevance search of relevance.ts and ranked_search.ts; no command scores
 * through this module any more.
 *
 * Which entries match is decided elsewhere (every term a substring of the
 * folded searchable fields, the reference's rule); this module only orders
 * the matches. Term frequency is counted per field, weighted (a hit in the
 * key or a tag says more about the subject than a hit in the text), and
 * normalized by field length; rare terms weigh more than common ones.
 */
import { countTerm, type FoldedText, foldField, foldText, isAscii, termCount } from "./tokenize.ts";
import { casefold } from "./casefold.ts";

/** The searchable fields of one entry, by name. */
export type SearchFields = Record<SearchField, string>;

/** Names of the searchable fields (the reference's list). */
export type SearchField =
  | "key"
  | "tags"
  | "id"
  | "text"
  | "falsifier"
  | "reason"
  | "location"
  | "trust"
  | "source";

/** How much one occurrence in a field counts, relative to the entry text. */
export const FIELD_WEIGHTS: Readonly<Record<SearchField, number>> = {
  key: 3,
  tags: 2.5,
  id: 1.5,
  text: 1,
  falsifier: 0.8,
  reason: 0.5,
  location: 0.3,
  trust: 0.3,
  source: 0.3,
};

const FIELDS = Object.keys(FIELD_WEIGHTS) as SearchField[];

/** BM25 saturation and length-normalization constants (the usual defaults). */
const K1 = 1.2;
const B = 0.75;

/** One entry prepared for matching and scoring. */
export type IndexedDoc = {
  fields: Record<SearchField, FoldedText>;
  lengths: Record<SearchField, number>;
};

/** Folds and measures an entry's searchable fields once. */
export function indexDoc(fields: SearchFields): IndexedDoc {
  const folded = {} as Record<SearchField, FoldedText>;
  const lengths = {} as Record<SearchField, number>;
  for (const name of FIELDS) {
    const value = fields[name];
    folded[name] = foldField(value);
    lengths[name] = termCount(folded[name].normalized);
  }
  return { fields: folded, lengths };
}

/** True when every term occurs in at least one field (the reference's match rule). */
export function matchesAll(doc: IndexedDoc, terms: readonly string[]): boolean {
  return terms.every((term) => FIELDS.some((name) => countTerm(doc.fields[name], term) > 0));
}

/** Corpus statistics needed for scoring: size, document frequencies, average field lengths. */
export type CorpusStats = {
  size: number;
  documentFrequency: Map<string, number>;
  averageLength: Record<SearchField, number>;
};

/** Computes corpus statistics for `terms` over every candidate document. */
export function corpusStats(docs: readonly IndexedDoc[], terms: readonly string[]): CorpusStats {
  const documentFrequency = new Map<string, number>();
  for (const term of terms) {
    let df = 0;
    for (const doc of docs) {
      if (FIELDS.some((name) => countTerm(doc.fields[name], term) > 0)) df++;
    }
    documentFrequency.set(term, df);
  }
  const averageLength = {} as Record<SearchField, number>;
  for (const name of FIELDS) {
    const total = docs.reduce((sum, doc) => sum + doc.lengths[name], 0);
    averageLength[name] = docs.length === 0 ? 1 : Math.max(total / docs.length, 1);
  }
  return { size: docs.length, documentFrequency, averageLength };
}

/** BM25F score of one document; rounded to 6 decimals so ties are exact and stable. */
export function scoreDoc(doc: IndexedDoc, terms: readonly string[], stats: CorpusStats): number {
  return scoreCounts((name, term) => countTerm(doc.fields[name], term), doc.lengths, terms, stats);
}

/**
 * The BM25F score of a document given each field's count of each term and
 * each field's folded length: what scoreDoc computes, for a caller that has
 * the counts without an indexed document (the history digest).
 */
export function scoreCounts(
  countIn: (name: SearchField, term: string) => number,
  lengths: Readonly<Record<SearchField, number>>,
  terms: readonly string[],
  stats: CorpusStats,
): number {
  let score = 0;
  for (const term of terms) {
    let weighted = 0;
    for (const name of FIELDS) {
      const tf = countIn(name, term);
      if (tf === 0) continue;
      const norm = 1 - B + B * (Math.max(lengths[name], 1) / stats.averageLength[name]);
      weighted += FIELD_WEIGHTS[name] * tf / norm;
    }
    if (weighted === 0) continue;
    const df = stats.documentFrequency.get(term) ?? 0;
    const idf = Math.log(1 + (stats.size - df + 0.5) / (df + 0.5));
    score += idf * (weighted * (K1 + 1)) / (weighted + K1);
  }
  return Math.round(score * 1e6) / 1e6;
}

/** A matching document's position in the input and its score. */
export type RankedDocument = { index: number; score: number };

/** The matching documents (input order) and the corpus statistics that score them. */
export type MatchResult = { matched: number[]; stats: CorpusStats };

/** Number of terms of one field value as its folded form counts them. */
export function foldedLength(value: string): number {
  // Case folding leaves ASCII words where they are: count the raw text.
  return isAscii(value) ? termCount(value) : termCount(foldField(value).normalized);
}

/**
 * Matches documents and gathers the statistics for scoring: one folded
 * haystack per document decides the match and the document frequencies (the
 * reference's rule, fields joined); field-length averages come from the
 * matching documents. `background` documents (known to hold none of the
 * terms) only enlarge the corpus size. Scoring is left to `scoreMatch`, so a
 * caller that prints only the first few groups scores only those.
 */
export function matchDocuments(
  docs: readonly SearchFields[],
  terms: readonly string[],
  background = 0,
  more: CorpusPart | null = null,
): MatchResult {
  const part = newCorpusPart(terms);
  const matched: number[] = [];
  docs.forEach((fields, index) => {
    if (addToCorpus(part, fields, terms)) matched.push(index);
  });
  const size = docs.length + background + (more?.size ?? 0);
  const count = matched.length + (more?.matched ?? 0);
  const documentFrequency = new Map<string, number>();
  for (const term of terms) {
    documentFrequency.set(
      term,
      part.documentFrequency.get(term)! + (more?.documentFrequency.get(term) ?? 0),
    );
  }
  const averageLength = {} as Record<SearchField, number>;
  for (const name of FIELDS) {
    const total = part.lengthSums[name] + (more?.lengthSums[name] ?? 0);
    averageLength[name] = count === 0 ? 1 : Math.max(total / count, 1);
  }
  return { matched, stats: { size, documentFrequency, averageLength } };
}

/**
 * What a share of the corpus contributes to the statistics: its size, how
 * many of its documents matched, document frequencies and the summed folded
 * field lengths of its matches. Lets a large share (history) be matched
 * without materializing a record for every document.
 */
export type CorpusPart = {
  size: number;
  matched: number;
  documentFrequency: Map<string, number>;
  lengthSums: Record<SearchField, number>;
};

/** An empty corpus share for `terms`. */
export function newCorpusPart(terms: readonly string[]): CorpusPart {
  const lengthSums = {} as Record<SearchField, number>;
  for (const name of FIELDS) lengthSums[name] = 0;
  return {
    size: 0,
    matched: 0,
    documentFrequency: new Map(terms.map((t) => [t, 0])),
    lengthSums,
  };
}

/**
 * Adds one document to `part` and tells whether it holds every term (the
 * reference's rule: each term a substring of the folded fields, joined).
 */
export function addToCorpus(
  part: CorpusPart,
  fields: SearchFields,
  terms: readonly string[],
): boolean {
  part.size++;
  // Terms never contain a line break, so no term can match across two fields.
  const joined = FIELDS.map((name) => fields[name]).join("\n");
  const plain = casefold(joined);
  const normalized = isAscii(joined) ? plain : foldText(joined);
  let all = true;
  for (const term of terms) {
    if (plain.includes(term) || normalized.includes(term)) {
      part.documentFrequency.set(term, part.documentFrequency.get(term)! + 1);
    } else all = false;
  }
  if (!all) return false;
  part.matched++;
  for (const name of FIELDS) part.lengthSums[name] += foldedLength(fields[name]);
  return true;
}

/** BM25F score of one matched document. */
export function scoreMatch(
  fields: SearchFields,
  terms: readonly string[],
  stats: CorpusStats,
): number {
  return scoreDoc(indexDoc(fields), terms, stats);
}

/** Matches and scores every document (see matchDocuments). Returns matches in input order. */
export function rankDocuments(
  docs: readonly SearchFields[],
  terms: readonly string[],
  background = 0,
): RankedDocument[] {
  const { matched, stats } = matchDocuments(docs, terms, background);
  return matched.map((index) => ({ index, score: scoreMatch(docs[index], terms, stats) }));
}
