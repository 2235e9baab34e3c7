/**
 * Rename over an existing file, the last step of an atomic replace. POSIX
 * rename replaces a busy target at once. Windows (MoveFileEx with
 * REPLACE_EXISTING) refuses while another process holds the target open
 * without delete sharing: a Python reader of the same store, an editor, a
 * virus scanner or the search indexer. Those holds last milliseconds, so on
 * Windows only, and only for those errors, the rename is retried with a
 * doubling pause: seven attempts and 0.63 s in all, the bound the reference
 * engine uses, before the error goes up. The caller holds the engine lock, so
 * no other bimri writer waits behind this.
 */

/** Pauses between attempts on Windows, in milliseconds (one more attempt than pauses). */
export const RENAME_RETRY_PAUSES_MS: readonly number[] = [10, 20, 40, 80, 160, 320];

/** What a rename needs from the system (injected in unit tests). */
export type RenameSystem = {
  /** The OS family (`Deno.build.os`). */
  os: string;
  /** Renames `from` to `to`, replacing `to`. */
  rename: (from: string, to: string) => void;
  /** Blocks the caller for `ms` milliseconds. */
  pause: (ms: number) => void;
};

function blockFor(ms: number): void {
  // A synchronous pause: the store layer is synchronous by design.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The running process's system. */
export const NATIVE_RENAME: RenameSystem = {
  os: Deno.build.os,
  rename: (from, to) => Deno.renameSync(from, to),
  pause: blockFor,
};

/**
 * True for the errors Windows reports while another process briefly holds a
 * file: access denied (os error 5), sharing violation (32), lock violation (33).
 */
export function isTransientWindowsHold(error: unknown): boolean {
  if (error instanceof Deno.errors.PermissionDenied || error instanceof Deno.errors.Busy) {
    return true;
  }
  return error instanceof Error && /\(os error (5|32|33)\)/.test(error.message);
}

/**
 * Renames `from` over `to`; on Windows, waits out a brief hold on `to` (see
 * the module note). A writer of a file people keep open in editors (the view)
 * may pass a longer `pauses` schedule.
 */
export function renameOver(
  from: string,
  to: string,
  system: RenameSystem = NATIVE_RENAME,
  pauses: readonly number[] = RENAME_RETRY_PAUSES_MS,
): void {
  for (let attempt = 0;; attempt++) {
    try {
      system.rename(from, to);
      return;
    } catch (error) {
      const retry = system.os === "windows" && attempt < pauses.length &&
        isTransientWindowsHold(error);
      if (!retry) throw error;
      system.pause(pauses[attempt]);
    }
  }
}
