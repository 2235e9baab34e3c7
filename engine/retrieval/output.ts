/**
 * Rendering retrieval results: the reference's seven-column TSV rows with its
 * no-match and omitted notices, and its JSON document
 * `{"matches": [...], "omitted": n, "total": n}` (keys sorted, one line),
 * each match carrying its typed fields (plus bimri's `score` when ranked).
 */
import type { JsonObject, JsonValue } from "../model/json.ts";
import type { RecallResult } from "./recall.ts";
import type { RecallMatch } from "./lookup.ts";

/** One TSV row: location, key, id, reason, trust, source, text. */
export function tsvRow(match: RecallMatch): string {
  return [match.location, match.key, match.id, match.reason, match.trust, match.source, match.text]
    .join("\t");
}

/** The default (TSV) output, including the no-match and omitted notices. */
export function renderTsv(result: RecallResult): string {
  if (result.total === 0) return `BIMRI: no memory matched ${result.target}.\n`;
  const lines = result.matches.map(tsvRow);
  if (result.omitted > 0) lines.push(`BIMRI: ${result.omitted} additional matches omitted.`);
  return lines.join("\n") + "\n";
}

/**
 * One match as a JSON object: the seven fields, the typed fields and, if
 * ranked, `score`, `matched` (the query words it holds) and `match` (phrase,
 * all or some).
 */
export function matchJson(match: RecallMatch, ranked = false): JsonObject {
  const record: JsonObject = {
    location: match.location,
    key: match.key,
    id: match.id,
    reason: match.reason,
    trust: match.trust,
    source: match.source,
    text: match.text,
    ...match.typed,
  };
  if (ranked) {
    record.score = match.score;
    if (match.matched !== undefined) record.matched = [...match.matched];
    if (match.match !== undefined) record.match = match.match;
  }
  return record;
}

/** The `--json` document. */
export function resultJson(result: RecallResult): JsonObject {
  return {
    matches: result.matches.map((match) => matchJson(match, result.ranked)),
    total: result.total,
    omitted: result.omitted,
  };
}

/**
 * Serializes like Python's `json.dumps(value, ensure_ascii=False,
 * sort_keys=True)`: one line, `", "` and `": "` separators, keys sorted by
 * code point at every level, non-ASCII characters kept as they are.
 */
export function compactSortedJson(value: JsonValue): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(compactSortedJson).join(", ")}]`;
  const keys = Object.keys(value).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${
    keys.map((key) => `${JSON.stringify(key)}: ${compactSortedJson(value[key])}`).join(", ")
  }}`;
}
