/**
 * Query terms and field folding for task-language search.
 *
 * The reference folds the query with `casefold()` and keeps the ASCII runs
 * `[a-z0-9]+`; an entry matches when every run is a substring of its
 * case-folded searchable fields. bimri keeps that contract for ASCII queries
 * and extends the alphabet: a term is a run of Unicode letters, marks and
 * digits (so `Straße`, `한국어`, `日本語` stay whole words) or an emoji
 * sequence. For an all-ASCII query the terms are exactly the reference's.
 * Also the searchable fields of a record and the default mode's match rule
 * (every search and the history digest fold them; see the end).
 */
import { casefold } from "./casefold.ts";
import { hasLineBreakOrControl, pyStrip } from "../model/text.ts";
import { BimriError } from "../errors.ts";

/** Longest query accepted, in code points (the reference's limit). */
export const QUERY_MAX_CHARS = 500;
/** Most terms a query may hold (the reference's limit). */
export const QUERY_MAX_TERMS = 32;

// An emoji sequence (pictograph or flag, with joiners, variation selectors,
// skin tones and keycaps), or a run of letters, marks and digits. Built on
// first use: its Unicode property classes take about a millisecond to build,
// and sync and close load this module (an archived row feeds the history
// digest) without ever splitting a query.
let termPattern: RegExp | null = null;

function termRegExp(): RegExp {
  return termPattern ??=
    /(?:\p{Extended_Pictographic}|\p{Regional_Indicator})(?:[\u200d\ufe0f\u20e3\p{Emoji_Modifier}]|\p{Extended_Pictographic}|\p{Regional_Indicator})*|[\p{L}\p{M}\p{N}]+/gu;
}

/** Case-folds and NFC-normalizes text the way query terms are compared. */
export function foldText(text: string): string {
  return casefold(text.normalize("NFC")).normalize("NFC");
}

/** Splits already folded text into terms (Unicode words and emoji sequences). */
export function termsOf(folded: string): string[] {
  return folded.match(termRegExp()) ?? [];
}

/** Number of terms in already folded text (a loop instead of a regex for ASCII text). */
export function termCount(folded: string): number {
  if (!isAscii(folded)) return termsOf(folded).length;
  let count = 0;
  let inTerm = false;
  for (let i = 0; i < folded.length; i++) {
    const c = folded.charCodeAt(i);
    const word = (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a);
    if (word && !inTerm) count++;
    inTerm = word;
  }
  return count;
}

/** True when every code unit of `text` is ASCII. */
export function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/**
 * Validates a task-language query and returns its distinct terms in order.
 * Refuses an empty, multi-line or over-long query and one with no terms or
 * more than 32.
 */
export function queryTerms(query: string): string[] {
  const trimmed = pyStrip(query);
  if (trimmed === "") {
    throw new BimriError(
      "invalid-input",
      "the query is empty; give one to 32 words to search for.",
    );
  }
  if (hasLineBreakOrControl(query)) {
    throw new BimriError(
      "invalid-input",
      "the query must be one line without tabs or control characters.",
    );
  }
  if ([...trimmed].length > QUERY_MAX_CHARS) {
    throw new BimriError(
      "invalid-input",
      `the query exceeds ${QUERY_MAX_CHARS} characters; shorten it.`,
    );
  }
  const terms = termsOf(foldText(trimmed));
  if (terms.length === 0 || terms.length > QUERY_MAX_TERMS) {
    throw new BimriError(
      "invalid-input",
      `the query must contain 1 to ${QUERY_MAX_TERMS} words (letters, digits or emoji); got ${terms.length}.`,
    );
  }
  return [...new Set(terms)];
}

/**
 * One searchable text in the two folded forms a term is looked up in: the
 * plain case fold (what the reference compares, so ASCII terms match exactly
 * its set) and the NFC-normalized fold (so a composed query finds decomposed
 * text and the other way round).
 */
export type FoldedText = { plain: string; normalized: string };

/** Folds one searchable text into both forms. */
export function foldField(text: string): FoldedText {
  const plain = casefold(text);
  const normalized = isAscii(text) ? plain : foldText(text);
  return { plain, normalized };
}

/** True when `term` occurs in either folded form. */
export function containsTerm(field: FoldedText, term: string): boolean {
  return field.plain.includes(term) || field.normalized.includes(term);
}

// The searchable fields of a record and the default mode's match rule (every
// term a substring of them, folded).
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

/** The searchable fields of one entry, by name. */
export type SearchFields = Record<SearchField, string>;

/** The searchable fields in the reference's order. */
export const SEARCH_FIELDS: readonly SearchField[] = [
  "key",
  "tags",
  "id",
  "text",
  "falsifier",
  "reason",
  "location",
  "trust",
  "source",
];

/** Number of terms of one field value as its folded form counts them. */
export function foldedLength(value: string): number {
  // Case folding leaves ASCII words where they are: count the raw text.
  return isAscii(value) ? termCount(value) : termCount(foldField(value).normalized);
}

/**
 * Whether a record holds every term (the reference's rule: each term a
 * substring of the folded fields, joined).
 */
export function holdsEveryTerm(fields: SearchFields, terms: readonly string[]): boolean {
  // Terms never contain a line break, so no term can match across two fields.
  const joined = SEARCH_FIELDS.map((name) => fields[name]).join("\n");
  const plain = casefold(joined);
  const normalized = isAscii(joined) ? plain : foldText(joined);
  return terms.every((term) => plain.includes(term) || normalized.includes(term));
}
