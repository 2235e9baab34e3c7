/**
 * The engine lock: an exclusive OS lock (flock / LockFileEx) on
 * `.bimri/engine.lock`, held only for short critical sections.
 */
import { BimriError } from "../errors.ts";
import { lstatOrNull } from "./files.ts";
import type { StorePaths } from "./paths.ts";

/** Creates the lock file (content "0") if it is missing; never replaces it. */
export function ensureLockFile(paths: StorePaths): void {
  const info = lstatOrNull(paths.lock);
  if (info?.isSymlink) {
    throw new BimriError(
      "store-unsafe",
      ".bimri/engine.lock is a symbolic link; replace it with a regular file.",
    );
  }
  if (info) return;
  try {
    const file = Deno.openSync(paths.lock, { write: true, createNew: true, mode: 0o644 });
    try {
      file.writeSync(new Uint8Array([0x30]));
      file.syncSync();
    } finally {
      file.close();
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
}

/** Runs `action` while holding the exclusive engine lock. */
export function withEngineLock<T>(paths: StorePaths, action: () => T): T {
  ensureLockFile(paths);
  const file = Deno.openSync(paths.lock, { read: true, write: true });
  try {
    file.lockSync(true);
    try {
      return action();
    } finally {
      file.unlockSync();
    }
  } finally {
    file.close();
  }
}
