/** `search --query Q [--rank]`: task-language search over current and historical memory; read-only. */
import { boolFlag, requiredFlag, stringFlag } from "./command.ts";
import type { Command } from "./command.ts";
import { OUTPUT_FLAGS_HELP, RANK_FLAG_HELP, runRetrieval } from "./recall.ts";
import { parseLimit } from "../engine/retrieval/recall.ts";

/** The search verb. */
export const searchCommand: Command = {
  name: "search",
  summary: "search current and historical memory in task language",
  help: `usage: bimri search --query TEXT [--rank] [--limit N] [--json]

  --query TEXT   1 to 32 words; without --rank all must occur in an entry's key, id,
                 text, reason, location, trust, source, tags or falsifier (case-insensitive;
                 accents, CJK text and emoji work). Groups HOT, COLD, HELD, HISTORY;
                 within a group by key, as the reference engine prints them.
${RANK_FLAG_HELP}
${OUTPUT_FLAGS_HELP}`,
  flags: {
    query: { type: "string" },
    rank: { type: "boolean" },
    limit: { type: "string", integer: true },
  },
  run(ctx, flags) {
    return runRetrieval(ctx, {
      query: requiredFlag(flags, "search", "query"),
      history: true,
      limit: parseLimit(stringFlag(flags, "limit")),
      rank: boolFlag(flags, "rank"),
    });
  },
};
