/** Closes this clone's other questions on a key the owner has just answered here. */
import type { Store } from "../store/store.ts";
import { readConflict } from "../records/conflict.ts";
import { saveShare, seeHead } from "./state.ts";
import type { ShareContext } from "./context.ts";
import { Pull } from "./pull.ts";

/**
 * After the owner answered a question on `key` in this clone: the other open
 * questions on the key from other clones (one raised before an agent here
 * moved the live value) are closed with the same answer, as the other clones
 * close theirs when the answer arrives.
 */
export function closeAnsweredHere(store: Store, ctx: ShareContext, key: string): number {
  const pull = new Pull(store, ctx);
  let closed = 0;
  for (const id of pull.openImportConflicts(key)) {
    const conflict = readConflict(store, id);
    if (!conflict) continue;
    pull.closeConflict(id, conflict.proposal_ids, key, pull.liveContent(key));
    closed++;
  }
  if (closed > 0) {
    seeHead(ctx.state, store);
    saveShare(ctx);
  }
  return closed;
}
