/** `get --key K [--history]`: the exact current generation of one subject; read-only. */
import { requiredFlag } from "./command.ts";
import { boolFlag, type Command, stringFlag } from "./command.ts";
import { OUTPUT_FLAGS_HELP, runRetrieval } from "./recall.ts";
import { parseLimit } from "../engine/retrieval/recall.ts";

/** The get verb. */
export const getCommand: Command = {
  name: "get",
  summary: "print a subject's current generation by exact key",
  help: `usage: bimri get --key KEY [--history] [--limit N] [--json]

  --key KEY      the subject's current generation (hot or cold); reads the head,
                 the state, the active runs' records (a damaged authority record
                 stops the read) and, for a cold subject, its one archive month
  --history      also held candidates and replaced/closed generations
${OUTPUT_FLAGS_HELP}`,
  flags: {
    key: { type: "string" },
    history: { type: "boolean" },
    limit: { type: "string", integer: true },
  },
  run(ctx, flags) {
    return runRetrieval(ctx, {
      key: requiredFlag(flags, "get", "key"),
      history: boolFlag(flags, "history"),
      limit: parseLimit(stringFlag(flags, "limit")),
    });
  },
};
