/**
 * Full garbage collections between the passes of the audit.
 *
 * Each audit pass (every revision, the archive, every authority record)
 * builds a working set of tens of MB that is garbage once the pass ends. V8
 * grows its heap to hold the next pass's allocations beside that garbage
 * rather than collect it first, which took doctor to about 200 MB at 10,000
 * runs although the live heap stays near 20 MB. A full collection between
 * passes keeps the peak near the largest single pass (about 135 MB there),
 * and the audit runs no slower, since it touches fewer new pages.
 *
 * V8 hands out its collector only behind `--expose-gc`: the flag is set at
 * run time and the collector taken from a fresh context, as Node's own tests
 * do. Loading `node:v8` and `node:vm` costs about 30 ms, so only an audit of
 * a large store enables it.
 */

let collector: (() => void) | null = null;

/** Makes `collectGarbage` effective for the rest of the process; a no-op where the runtime refuses. */
export async function enableFullCollections(): Promise<void> {
  if (collector !== null) return;
  try {
    const [v8, vm] = await Promise.all([import("node:v8"), import("node:vm")]);
    v8.setFlagsFromString("--expose-gc");
    const gc: unknown = vm.runInNewContext("typeof gc === 'function' ? gc : null");
    if (typeof gc === "function") collector = gc as () => void;
  } catch {
    // Without the collector the audit only holds more memory.
  }
}

/** A full collection now when enabled, otherwise nothing. */
export function collectGarbage(): void {
  collector?.();
}
