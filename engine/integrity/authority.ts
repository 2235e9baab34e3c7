/**
 * Damaged-authority detection for the degraded mode (protocol 9.4): start
 * still works and prints AUTHORITY RECOVERY NEEDED. Implemented by the
 * integrity work.
 */
import type { Store } from "../store/store.ts";

/** One damaged authority record. */
export type AuthorityIssue = { kind: string; id: string; path: string; problem: string };

/** The brief lines and issues for damaged authority (empty when healthy). */
export function authorityBriefLines(_store: Store): { lines: string[]; issues: AuthorityIssue[] } {
  return { lines: [], issues: [] };
}
