/** `index`: rebuild the derived `.bimri/index.tsv` export from authority. */
import { rebuildIndex } from "../engine/retrieval/index_tsv.ts";
import { syncView } from "../engine/memory/view_sync.ts";
import { withStore } from "../engine/store/store.ts";
import { requireHealthyAuthority } from "../engine/integrity/authority.ts";
import { type Command, ok } from "./command.ts";

/** The index verb. */
export const indexCommand: Command = {
  name: "index",
  summary: "rebuild the derived .bimri/index.tsv export",
  help: `usage: bimri index

Rebuilds .bimri/index.tsv (eight tab-separated columns: id, key, loc, trust,
source, status, file, headline) from hot and cold memory, run logs and the
archive. The index is an export for other tools; retrieval never reads it.`,
  flags: {},
  progress: () => "rebuilding the index",
  run(ctx) {
    return withStore(ctx.root, (store) => {
      const sync = syncView(store);
      requireHealthyAuthority(store);
      const rows = rebuildIndex(store);
      return ok(`BIMRI: index rebuilt with ${rows} rows.\n`, { rows }, [
        ...sync.notices,
        ...sync.warnings,
      ]);
    });
  },
};
