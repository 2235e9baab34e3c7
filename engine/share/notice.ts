/**
 * Notices of team memory found deep inside a command (records restored,
 * gaps): queued here and printed on stderr by the CLI once the command ends.
 */

const queued: string[] = [];

/** Queues a notice line for stderr (each distinct line once per process). */
export function noteShare(line: string): void {
  if (!queued.includes(line)) queued.push(line);
}

/** Takes (and clears) the queued notice lines. */
export function takeShareNotices(): string[] {
  return queued.splice(0, queued.length);
}
