// The write path's share observer fails closed: a shared store with nothing wired stops the command.
import { ok, strictEqual, throws } from "node:assert/strict";
import { BimriError } from "../../engine/errors.ts";
import { REPLICA_FILE, shareObserver } from "../../engine/memory/share_observer.ts";
import { StorePaths } from "../../engine/store/paths.ts";
import type { Store } from "../../engine/store/store.ts";

Deno.test("an unshared store needs no observer; a shared one with none wired is refused", () => {
  const root = Deno.makeTempDirSync();
  try {
    const paths = new StorePaths(root);
    Deno.mkdirSync(paths.dir);
    const store = { paths } as unknown as Store;
    strictEqual(shareObserver(store), null);
    Deno.writeTextFileSync(paths.folder(REPLICA_FILE), "{}");
    throws(() => shareObserver(store), (e) => {
      ok(e instanceof BimriError);
      strictEqual(e.code, "busy");
      return true;
    });
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});
