/** `search --query Q`: ranked task-language search over current and historical memory; read-only. */
import { requiredFlag, stringFlag } from "./command.ts";
import type { Command } from "./command.ts";
import { OUTPUT_FLAGS_HELP, runRetrieval } from "./recall.ts";
import { parseLimit } from "../engine/retrieval/recall.ts";

/** The search verb. */
export const searchCommand: Command = {
  name: "search",
  summary: "search current and historical memory in task language, ranked",
  help: `usage: bimri search --query TEXT [--limit N] [--json]

  --query TEXT   1 to 32 words that must all occur in an entry's key, id, text,
                 reason, location, trust, source, tags or falsifier (case-insensitive;
                 accents, CJK text and emoji work). Groups HOT, COLD, HELD, HISTORY;
                 within a group the most relevant first (key and tag hits weigh most).
${OUTPUT_FLAGS_HELP}`,
  flags: { query: { type: "string" }, limit: { type: "string", integer: true } },
  run(ctx, flags) {
    return runRetrieval(ctx, {
      query: requiredFlag(flags, "search", "query"),
      history: true,
      limit: parseLimit(stringFlag(flags, "limit")),
    });
  },
};
