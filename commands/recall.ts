/**
 * `recall --key K [--history]` or `recall --query Q`: exact lookup of a
 * subject or task-language search (ranked with --rank); read-only. Also the shared runner
 * of `get` and `search`.
 */
import { parseLimit, recall, type RecallRequest } from "../engine/retrieval/recall.ts";
import { compactSortedJson, renderTsv, resultJson } from "../engine/retrieval/output.ts";
import {
  boolFlag,
  type Command,
  type CommandContext,
  type CommandResult,
  stringFlag,
} from "./command.ts";
import type { FlagValues } from "./command.ts";

/** Runs a retrieval request and renders TSV or the reference's JSON document (exit 1 on no match). */
export async function runRetrieval(
  ctx: CommandContext,
  request: RecallRequest,
): Promise<CommandResult> {
  const result = await recall(ctx.root, request);
  const data = resultJson(result);
  return {
    exitCode: result.total > 0 ? 0 : 1,
    text: renderTsv(result),
    data,
    jsonText: compactSortedJson(data) + "\n",
  };
}

/** `--limit` and `--json` help lines shared by the three verbs. */
export const OUTPUT_FLAGS_HELP = `  --limit N      print at most N matches (default 20, at most 500)
  --json         print {"matches": [...], "total": N, "omitted": N}; each match has
                 the seven columns as fields plus tier-specific fields (and, with
                 --rank, its score, the query words it matched and its match kind)

Output: one tab-separated row per match: location (HOT, COLD, HELD, HISTORY),
key, id, reason, trust, source, text. Exit 0 with a match, 1 with none,
2 on error. Retrieval never changes the store.`;

/** Help of `--rank` (search and recall --query). */
export const RANK_FLAG_HELP =
  `  --rank         relevance search in task language: any word may match, inflections
                 (retry/retries/retried) and filler words (how, why, the...) are
                 folded away; phrase and all-word matches first, then the most
                 relevant (key and tag hits weigh most); current memory before
                 history; --json adds each match's score, matched words and match`;

function requestFrom(flags: FlagValues, history: boolean): RecallRequest {
  return {
    key: stringFlag(flags, "key"),
    query: stringFlag(flags, "query"),
    history,
    limit: parseLimit(stringFlag(flags, "limit")),
    rank: boolFlag(flags, "rank"),
  };
}

/** The recall verb. */
export const recallCommand: Command = {
  name: "recall",
  summary: "look up a subject by key, or search memory in task language",
  help: `usage: bimri recall (--key KEY [--history] | --query TEXT [--rank]) [--limit N] [--json]

  --key KEY      the subject's current generation (hot or cold)
  --history      with --key: also held candidates and replaced/closed generations
  --query TEXT   search current and historical memory; without --rank every word
                 must occur (case-insensitive, any language or emoji), current
                 first, then by key
${RANK_FLAG_HELP}
${OUTPUT_FLAGS_HELP}

Agents: ask in the words of your task with --query "<task words>" --rank
(e.g. --query "how do retries work" --rank); use --key KEY for a subject whose
key you know. --query without --rank is the reference's strict mode for scripts.`,
  flags: {
    key: { type: "string" },
    query: { type: "string" },
    history: { type: "boolean" },
    rank: { type: "boolean" },
    limit: { type: "string", integer: true },
  },
  run(ctx, flags) {
    const query = stringFlag(flags, "query");
    // A query always spans history, as in the reference.
    return runRetrieval(ctx, requestFrom(flags, query !== undefined || boolFlag(flags, "history")));
  },
};
