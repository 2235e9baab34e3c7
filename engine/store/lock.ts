/**
 * The engine lock: an exclusive OS lock (flock / LockFileEx) on
 * `.bimri/engine.lock`, held only for short critical sections. Readers take
 * it shared. Nobody waits for it forever: like the reference engine, a
 * command that cannot get it within 10 seconds stops with "BIMRI is busy"
 * before writing anything, so one stuck process cannot hang every agent.
 */
import { BimriError } from "../errors.ts";
import { linkRefusal, lstatOrNull } from "./files.ts";
import type { StorePaths } from "./paths.ts";

/** How long a command waits for the engine lock before it gives up (the reference's 10 s). */
const DEFAULT_LOCK_TIMEOUT_MS = 10_000;

/** Creates the lock file (content "0") if it is missing; never replaces it. */
export function ensureLockFile(paths: StorePaths): void {
  const info = lstatOrNull(paths.lock);
  if (info?.isSymlink) {
    throw new BimriError(
      "store-unsafe",
      linkRefusal(paths.lock, ".bimri/engine.lock", "replace it with a regular file."),
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
  return holding(Deno.openSync(paths.lock, { read: true, write: true }), true, action);
}

/**
 * Runs `action` while holding the engine lock shared, for a reader that must
 * not write anything: the existing lock file is opened read-only and never
 * created. Writers hold the lock exclusively, so the read never sees a commit
 * half done.
 */
export function withSharedEngineLock<T>(paths: StorePaths, action: () => T): T {
  return holding(Deno.openSync(paths.lock, { read: true }), false, action);
}

/** Runs `action` holding the lock on the open lock file `file`, then releases and closes it. */
function holding<T>(file: Deno.FsFile, exclusive: boolean, action: () => T): T {
  try {
    acquireLock(file, exclusive);
    try {
      return action();
    } finally {
      file.unlockSync();
    }
  } finally {
    file.close();
  }
}

/**
 * Takes the lock on the open lock file `file` (exclusive or shared), or
 * throws the busy refusal once the timeout has passed without it.
 *
 * Non-blocking tries rather than a blocking `lockSync`: a blocking call
 * cannot be given up, and a background `lock()` raced against a timer would
 * leave an acquisition to clean up after the timeout, in the long-lived MCP
 * server too. A failed try holds nothing, so giving up leaves nothing behind.
 * The uncontended case is the first try: one system call, no wait.
 */
export function acquireLock(file: Deno.FsFile, exclusive: boolean): void {
  if (file.tryLockSync(exclusive)) return;
  const deadline = performance.now() + lockTimeoutMs();
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) throw busy();
    // 20-50 ms with jitter, as the reference sleeps: waiters that collided
    // once do not keep retrying in step.
    sleepSync(Math.min(left, 20 + Math.random() * 30));
    if (file.tryLockSync(exclusive)) return;
  }
}

/** The refusal of a command that could not get the engine lock in time. */
function busy(): BimriError {
  return new BimriError("busy", "BIMRI is busy. Retry the command.");
}

/**
 * The lock timeout in milliseconds. BIMRI_LOCK_TIMEOUT_MS exists for tests
 * only (they cannot spend 10 s per refusal); it is not a user setting, and
 * anything but a non-negative integer falls back to the 10 s default.
 */
function lockTimeoutMs(): number {
  const raw = Deno.env.get("BIMRI_LOCK_TIMEOUT_MS");
  if (raw !== undefined && /^\d{1,9}$/.test(raw)) return Number(raw);
  return DEFAULT_LOCK_TIMEOUT_MS;
}

/** A cell nobody ever notifies, so Atomics.wait on it is a plain timed sleep. */
const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

/**
 * Sleeps without returning to the event loop, so every lock user stays
 * synchronous and no caller had to change. A CLI command has nothing else to
 * do meanwhile; the MCP server's other requests wait, as they did behind the
 * old blocking `lockSync`, but now for 10 seconds at most. No lock is ever
 * held across an await, so this process never waits on itself.
 */
function sleepSync(ms: number): void {
  Atomics.wait(SLEEPER, 0, 0, ms);
}
