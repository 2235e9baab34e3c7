/**
 * Opening an existing store for retrieval without writing anything: no
 * layout creation, no initialization, no view healing, no lock-file
 * creation. A shared lock on the existing `.bimri/engine.lock` keeps a
 * writer's commit from interleaving with the read (writers hold it exclusively).
 * A read waits for it at most as long as a write does, then reports BIMRI busy.
 */
import { BimriError } from "../errors.ts";
import { lstatOrNull } from "../store/files.ts";
import { withSharedEngineLock } from "../store/lock.ts";
import { StorePaths } from "../store/paths.ts";
import { openExisting, refuseLegacyRootFiles, type Store } from "../store/store.ts";

/** Runs `action` on the loaded existing store at `root`, read-only, under a shared lock. */
export function withReadOnlyStore<T>(root: string, action: (store: Store) => T): T {
  const paths = new StorePaths(root);
  const dir = lstatOrNull(paths.dir);
  if (dir === null) {
    throw new BimriError(
      "store-unsafe",
      `no BIMRI memory at ${root}: .bimri/ is missing. Run \`start\` there first, or pass --root.`,
    );
  }
  if (dir.isSymlink || !dir.isDirectory) {
    throw new BimriError(
      "store-unsafe",
      ".bimri is not a regular folder; retrieval refuses to follow it. Run doctor.",
    );
  }
  const lock = lstatOrNull(paths.lock);
  if (lock === null || lock.isSymlink || !lock.isFile) {
    throw new BimriError(
      "store-unsafe",
      ".bimri/engine.lock is missing or not a regular file; read-only commands never create it. Run status or doctor once (either recreates a missing lock file), then read again.",
    );
  }
  return withSharedEngineLock(paths, () => {
    const store = openExisting(paths);
    refuseLegacyRootFiles(paths, store.state, "reader");
    return action(store);
  });
}
