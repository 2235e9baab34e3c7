/** The searchable fields of a record and the default mode's match rule (every term a substring of them, folded). */
import { foldField, foldText, isAscii, termCount } from "./tokenize.ts";
import { casefold } from "./casefold.ts";

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
