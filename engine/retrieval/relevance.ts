/**
 * Relevance search's query words and scoring (`--rank`): English stop words
 * dropped, a light English stemmer (retry/retries/retried/retrying share a
 * stem), whole-word matching of stems in folded text, and a field-weighted
 * BM25 (BM25F) over an entry's key parts, tags, ID, text and falsifier.
 * Pure: no I/O.
 */
import { foldText } from "./tokenize.ts";

/**
 * Words that say nothing about a subject: articles, pronouns, auxiliaries,
 * modal verbs, prepositions, conjunctions and question words (a common
 * English stop list), plus the fragments an apostrophe leaves (`don't`).
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all am an and any are as at be because been before being " +
    "below between both but by can could d did do does doing done down during each few for from " +
    "further had has have having he her here hers herself him himself his how i if in into is it " +
    "its itself just ll m may me might more most must my myself no nor not now of off on once only " +
    "or other our ours ourselves out over own re s same shall she should so some such t than that " +
    "the their theirs them themselves then there these they this those through to too under until " +
    "up us ve very was we were what when where which while who whom whose why will with would you " +
    "your yours yourself yourselves"
  ).split(" "),
);

/**
 * A light English stemmer for lowercase ASCII words of four letters or more
 * (others are returned as they are): plural and third-person `-s`/`-es`/`-ies`,
 * past `-ed`/`-ied` and `-ing` (with a doubled final consonant undone), a
 * final silent `e`, and a final `y` after a consonant written `i`. The stem is
 * always a prefix of the word, except that its last letter may be an `i`
 * standing for a `y` (see `probeOf`).
 */
export function stem(word: string): string {
  if (word.length < 4 || !/^[a-z]+$/.test(word)) return word;
  let w = word;
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("ies") && w.length > 4) w = w.slice(0, -3) + "y";
  else if (w.endsWith("s") && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith("ied") && w.length > 4) w = w.slice(0, -3) + "y";
  else if (!w.endsWith("eed") && /(?:ed|ing)$/.test(w)) {
    const base = w.slice(0, w.endsWith("ed") ? -2 : -3);
    if (base.length >= 3 && /[aeiouy]/.test(base)) {
      w = /([^aeioulsz])\1$/.test(base) ? base.slice(0, -1) : base;
    }
  }
  if (w.length > 3 && w.endsWith("e")) w = w.slice(0, -1);
  if (w.length > 2 && /[^aeiou]y$/.test(w)) w = w.slice(0, -1) + "i";
  return w;
}

/** The longest prefix shared by every word with this stem: the stem without a final `i`. */
export function probeOf(stemmed: string): string {
  return stemmed.length > 1 && stemmed.endsWith("i") ? stemmed.slice(0, -1) : stemmed;
}

/** One word of a relevance query. */
export type QueryWord = {
  /** The folded query term, as the user wrote it. */
  term: string;
  /** Its stem (the term itself when it is not a plain ASCII word). */
  stem: string;
  /** What every matching word starts with (found by a fast substring scan, then checked). */
  probe: string;
  /** True when matched as a whole word by stem; false: as a substring (non-ASCII, emoji). */
  byWord: boolean;
};

/** A parsed relevance query. */
export type RelevanceQuery = {
  /** Every folded term (the reference's match rule: all of them as substrings). */
  terms: string[];
  /** The words that carry the subject: stop words dropped, one per stem. */
  words: QueryWord[];
  /** The folded query with single spaces, matched as a phrase; null for a one-term query. */
  phrase: string | null;
};

/** How much a word that only starts with the query's stem counts (`postgres` in `postgresql`). */
export const PREFIX_WEIGHT = 0.5;
/** Shortest stem that also matches longer words it begins. */
const PREFIX_MIN = 4;

/**
 * Builds the relevance query from the query text and its terms (queryTerms).
 * A query made only of stop words keeps them all.
 */
export function relevanceQuery(query: string, terms: readonly string[]): RelevanceQuery {
  const content = terms.filter((term) => !STOP_WORDS.has(term));
  const words: QueryWord[] = [];
  const seen = new Set<string>();
  for (const term of content.length > 0 ? content : terms) {
    const byWord = /^[a-z0-9]+$/.test(term);
    const stemmed = byWord ? stem(term) : term;
    if (seen.has(stemmed)) continue;
    seen.add(stemmed);
    words.push({ term, stem: stemmed, probe: byWord ? probeOf(stemmed) : term, byWord });
  }
  const phrase = terms.length > 1 ? foldText(query).trim().split(/\s+/).join(" ") : null;
  return { terms: [...terms], words, phrase };
}

const WORD_CHAR = /[\p{L}\p{M}\p{N}]/u;

function isWordChar(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  if (c < 0x80) return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39);
  return WORD_CHAR.test(text[at]);
}

/**
 * How much `word` occurs in `text` between `start` and `end` (folded text):
 * 1 per whole word with the same stem, PREFIX_WEIGHT per longer word that
 * starts with the stem; a non-ASCII term counts its substring occurrences.
 */
export function countWord(text: string, word: QueryWord, start = 0, end = text.length): number {
  let n = 0;
  if (!word.byWord) {
    for (let at = text.indexOf(word.term, start); at !== -1;) {
      if (at + word.term.length > end) break;
      n++;
      at = text.indexOf(word.term, at + word.term.length);
    }
    return n;
  }
  for (let at = text.indexOf(word.probe, start); at !== -1 && at < end;) {
    let stop = at + word.probe.length;
    if (stop > end) break;
    if (at > start && isWordChar(text, at - 1)) {
      at = text.indexOf(word.probe, at + 1);
      continue;
    }
    while (stop < end && isWordChar(text, stop)) stop++;
    n += wordWeight(word, text.slice(at, stop), new Map());
    at = text.indexOf(word.probe, stop);
  }
  return n;
}

/**
 * What one word found in the text counts for `word` (see countWord), given
 * that it starts with the word's probe. Remembered per found word, since the
 * same few words recur across thousands of entries.
 */
export function wordWeight(word: QueryWord, found: string, seen: Map<string, number>): number {
  let weight = seen.get(found);
  if (weight === undefined) {
    weight = found === word.term || stem(found) === word.stem
      ? 1
      : word.stem.length >= PREFIX_MIN && found.startsWith(word.stem)
      ? PREFIX_WEIGHT
      : 0;
    seen.set(found, weight);
  }
  return weight;
}

/** True when the character at `at` belongs to a word (a letter, mark or digit). */
export function wordCharAt(text: string, at: number): boolean {
  return isWordChar(text, at);
}

/** The fields relevance is scored on, in order. */
export const RELEVANCE_FIELDS = ["key", "tags", "id", "text", "falsifier"] as const;
/** One of RELEVANCE_FIELDS. */
export type RelevanceField = typeof RELEVANCE_FIELDS[number];

/** Weight of a hit in each field (a key or tag hit says most about the subject). */
export const RELEVANCE_WEIGHTS: readonly number[] = [3, 2, 1, 1, 0.8];

const K1 = 1.2;
const B = 0.75;

/** Corpus figures for scoring: size, each word's document frequency, average field lengths. */
export type RelevanceStats = { size: number; df: number[]; averageLength: number[] };

/**
 * BM25F score of one entry from `counts[w][f]` (query word by field) and
 * its field lengths, rounded to 6 decimals so ties are exact and stable.
 */
export function relevanceScore(
  counts: readonly (readonly number[])[],
  lengths: readonly number[],
  stats: RelevanceStats,
): number {
  return relevanceScoreFlat(counts.flat(), 0, lengths, 0, counts.length, stats);
}

/**
 * relevanceScore over flat arrays: `counts[countsAt + w * F + f]` and
 * `lengths[lengthsAt + f]`, F the number of RELEVANCE_FIELDS.
 */
export function relevanceScoreFlat(
  counts: ArrayLike<number>,
  countsAt: number,
  lengths: ArrayLike<number>,
  lengthsAt: number,
  words: number,
  stats: RelevanceStats,
): number {
  const fields = RELEVANCE_FIELDS.length;
  let score = 0;
  for (let w = 0; w < words; w++) {
    let weighted = 0;
    for (let f = 0; f < fields; f++) {
      const tf = counts[countsAt + w * fields + f];
      if (tf === 0) continue;
      const length = Math.max(lengths[lengthsAt + f], 1);
      const norm = 1 - B + B * (length / Math.max(stats.averageLength[f], 1));
      weighted += RELEVANCE_WEIGHTS[f] * tf / norm;
    }
    if (weighted === 0) continue;
    const df = stats.df[w];
    const idf = Math.log(1 + (stats.size - df + 0.5) / (df + 0.5));
    score += idf * (weighted * (K1 + 1)) / (weighted + K1);
  }
  return Math.round(score * 1e6) / 1e6;
}

/** How a match relates to the whole query: the phrase, every term, or some words. */
export type MatchKind = "phrase" | "all" | "some";

/** Order of the match kinds (a phrase or all-terms match ranks first). */
export const MATCH_KIND_ORDER: Readonly<Record<MatchKind, number>> = {
  phrase: 0,
  all: 1,
  some: 2,
};
