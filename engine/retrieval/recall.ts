/**
 * recall / get / search: exact-key lookup of the accepted current generation
 * (optionally with its history and held candidates), and the entry to
 * task-language search over current and historical memory (search.ts).
 * Strictly read-only.
 *
 * The order is the reference's: HOT, then COLD, HELD, HISTORY; within a
 * group by key, id, reason. A ranked query (`--rank`) is a relevance search
 * instead (ranked_search.ts): any query word may match, current memory
 * first, most relevant first, so `--limit N` keeps the N best matches.
 */
import { BimriError } from "../errors.ts";
import { requireKey } from "../model/ids.ts";
import { pyStrip } from "../model/text.ts";
import type { Store } from "../store/store.ts";
import { StorePaths } from "../store/paths.ts";
import { withReadOnlyStore } from "./read_store.ts";
import {
  compareOrder,
  exactCurrentRecords,
  type RecallMatch,
  type RetrievalRecord,
} from "./lookup.ts";

/** Default number of matches printed. */
export const DEFAULT_LIMIT = 20;
/** Largest `--limit` accepted. */
export const MAX_LIMIT = 500;

/** What to look up: exactly one of `key` and `query`. */
export type RecallRequest = {
  key?: string;
  query?: string;
  /** With a key: include held candidates and replaced/closed history. Queries always do. */
  history: boolean;
  limit: number;
  /** A query only: order each group by relevance and report each match's score. */
  rank?: boolean;
};

/** The result of a lookup or search. */
export type RecallResult = {
  /** The normalized key, or the query as given (for the no-match message). */
  target: string;
  /** The first `limit` matches in output order. */
  matches: RecallMatch[];
  total: number;
  omitted: number;
  /** Whether the matches were ranked (their scores are printed only then). */
  ranked: boolean;
};

/** Parses a `--limit` value (a positive integer up to 500). */
export function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LIMIT;
  const text = pyStrip(value);
  if (!/^[+]?[0-9]+$/.test(text) || Number(text) < 1) {
    throw new BimriError(
      "usage",
      `--limit must be a positive integer (got ${JSON.stringify(value)}).`,
    );
  }
  const limit = Number(text);
  if (limit > MAX_LIMIT) {
    throw new BimriError("usage", `--limit cannot exceed ${MAX_LIMIT}.`);
  }
  return limit;
}

/**
 * Matches of an exact key: current only, or with held candidates and history
 * (`keyRecords` of records.ts, which the caller loads only for a history).
 */
export function lookupKey(
  store: Store,
  key: string,
  keyRecords: ((store: Store, key: string) => RetrievalRecord[]) | null,
): RecallMatch[] {
  const records = keyRecords !== null ? keyRecords(store, key) : exactCurrentRecords(store, key);
  return records.map((record) => ({ ...record, score: 0 })).sort(compareOrder);
}

/**
 * Runs a lookup or search against the store at `root` without writing
 * anything. The search machinery (ranking, case folding, the history digest)
 * is loaded only for a query, so `get --key` stays small.
 */
export async function recall(root: string, request: RecallRequest): Promise<RecallResult> {
  if ((request.key === undefined) === (request.query === undefined)) {
    throw new BimriError("usage", "give exactly one of --key or --query.");
  }
  const ranked = request.rank === true;
  if (ranked && request.query === undefined) {
    throw new BimriError("usage", "--rank orders the matches of a query; use it with --query.");
  }
  const key = request.key !== undefined ? requireKey(request.key) : undefined;
  let read: (store: Store) => { matches: RecallMatch[]; total: number };
  if (key !== undefined) {
    // Held candidates and history (decisions, proposals, the archive) load only for --history.
    const keyRecords = request.history ? (await import("./records.ts")).keyRecords : null;
    read = (store) => {
      const all = lookupKey(store, key, keyRecords);
      return { matches: all.slice(0, request.limit), total: all.length };
    };
  } else {
    const { queryTerms, searchStore } = await import("./search.ts");
    const query = request.query ?? "";
    const terms = queryTerms(query);
    if (ranked) {
      const { relevanceQuery } = await import("./relevance.ts");
      const { searchRanked } = await import("./ranked_search.ts");
      const relevance = relevanceQuery(query, terms);
      read = (store) => searchRanked(store, relevance, request.limit);
    } else {
      read = (store) => searchStore(store, terms, request.limit);
    }
  }
  // Every read first proves authority sound (protocol 12), as the reference
  // does: a damaged record stops it. The everyday layer vouches in the usual
  // case at the cost of what the active runs hold, not what history holds (its
  // folder fingerprints vouch for the rest); only when it cannot is the full
  // check loaded and the read done again under it.
  // A store whose summary names no active run needs only the summary match
  // (summary.ts); the record schemas and per-record checks of
  // everyday.ts load when an active run's records must be validated.
  const { idleStoreVouched, summaryNamesActiveRuns } = await import(
    "../integrity/summary.ts"
  );
  const vouches = summaryNamesActiveRuns(new StorePaths(root))
    ? (await import("../integrity/everyday.ts")).everydayVouches
    : idleStoreVouched;
  let found = withReadOnlyStore(root, (store) => vouches(store) ? read(store) : null);
  if (found === null) {
    const proveAuthority = await authorityCheck();
    found = withReadOnlyStore(root, (store) => {
      proveAuthority(store);
      return read(store);
    });
  }
  return {
    target: key ?? request.query ?? "",
    matches: found.matches,
    total: found.total,
    omitted: Math.max(0, found.total - request.limit),
    ranked,
  };
}

/**
 * The read-only authority check of a historical read: the everyday check
 * (its derived summary may vouch for the store; nothing is written), turned
 * into a refusal naming the first damaged record.
 */
async function authorityCheck(): Promise<(store: Store) => void> {
  const { cachedAuthorityIssues, issueLine } = await import("../integrity/authority.ts");
  return (store) => {
    const issues = cachedAuthorityIssues(store, false, null, true);
    if (issues.length === 0) return;
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
    throw new BimriError(
      "authority-recovery-needed",
      `recall stopped because authority recovery is required: ${
        issueLine(issues[0])
      }${more} Run doctor for the full audit; with the owner's approval use quarantine-authority and restore-authority.`,
    );
  };
}
