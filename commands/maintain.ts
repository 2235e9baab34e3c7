/** `maintain`: print the retention forecast and byte pressure, then rebuild the index. */
import { retentionForecast } from "../engine/memory/residency.ts";
import { syncView } from "../engine/memory/view_sync.ts";
import { rebuildIndex } from "../engine/retrieval/index_tsv.ts";
import { BimriError } from "../engine/errors.ts";
import { withStore } from "../engine/store/store.ts";
import { requireHealthyAuthority } from "../engine/integrity/authority.ts";
import { type Command, ok } from "./command.ts";

/** The maintain verb. */
export const maintainCommand: Command = {
  name: "maintain",
  summary: "print the retention forecast and byte pressure; rebuild index.tsv",
  help: `usage: bimri maintain

Reports hot bytes against the ceiling, the number of cold-current subjects and
which Tier 2 subject the next byte-pressure admission would cool. Memory is not
changed; only the derived .bimri/index.tsv is rebuilt.`,
  flags: {},
  progress: () => "maintaining the store",
  run(ctx) {
    return withStore(ctx.root, (store) => {
      const sync = syncView(store);
      requireHealthyAuthority(store);
      if (store.head.view.errors.length > 0) {
        throw new BimriError(
          "store-corrupt",
          `maintenance stopped: ${store.head.view.errors.join("; ")}`,
        );
      }
      const f = retentionForecast(store.head.view, store.head.text, store.state);
      const rows = rebuildIndex(store);
      const lines = [
        `BIMRI retention forecast: hot bytes ${f.usedBytes}/${f.ceiling} (${f.percent}%); cold current ${f.coldCurrent}.`,
        f.advice,
        `BIMRI: index rebuilt with ${rows} rows.`,
      ];
      return ok(lines.join("\n") + "\n", {
        hot_bytes: f.usedBytes,
        hot_max_bytes: f.ceiling,
        percent: f.percent,
        cold_current: f.coldCurrent,
        next_to_cool: f.nextToCool,
        advice: f.advice,
        index_rows: rows,
      }, [...sync.notices, ...sync.warnings]);
    });
  },
};
