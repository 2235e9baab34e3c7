/** What a recall match is and the reference's output order of matches (group, then key, ID, reason). */
import { compareCodePoints } from "../model/text.ts";
import { LOCATIONS, type RetrievalRecord } from "./records.ts";

/**
 * One match: the record plus its relevance score (0 for key lookups and
 * unranked queries) and, for a ranked query, the query words it matched and
 * whether it holds the phrase, every term, or some words.
 */
export type RecallMatch = RetrievalRecord & {
  score: number;
  matched?: string[];
  match?: "phrase" | "all" | "some";
};

/** What the output order compares of a record. */
export type OrderKey = Pick<RetrievalRecord, "location" | "key" | "id" | "reason">;

/** The reference's output order: group (HOT, COLD, HELD, HISTORY), then key, ID and reason. */
export function compareOrder(a: OrderKey, b: OrderKey): number {
  return LOCATIONS.indexOf(a.location) - LOCATIONS.indexOf(b.location) ||
    compareCodePoints(a.key, b.key) ||
    compareCodePoints(a.id, b.id) ||
    compareCodePoints(a.reason, b.reason);
}
