/**
 * Clock rules: timestamps are UTC whole seconds; calendar dates (run dates,
 * archive months, the brief) follow the local date, as the reference does.
 * The clock itself comes in from the edge (`useClock`): main.ts pins it from
 * BIMRI_NOW (an ISO timestamp) for tests; the model never reads the process.
 */

/** UTC timestamp grammar of authority records. */
export const TIMESTAMP = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$/;
/** Calendar date grammar. */
export const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

/** Where the current instant comes from. */
export type Clock = () => Date;

/** The system clock. */
export const SYSTEM_CLOCK: Clock = () => new Date();

let clock: Clock = SYSTEM_CLOCK;

/** Installs the clock every later `now()` reads (called by the edge: main.ts, tests, benches). */
export function useClock(next: Clock): void {
  clock = next;
}

/**
 * The clock a pin names: a valid ISO timestamp (BIMRI_NOW) pins every
 * instant to it; none, an empty or an unparsable one means the system clock.
 */
export function pinnedClock(pin: string | undefined): Clock {
  if (!pin) return SYSTEM_CLOCK;
  const pinned = new Date(pin).getTime();
  if (Number.isNaN(pinned)) return SYSTEM_CLOCK;
  return () => new Date(pinned);
}

/** The current instant, from the installed clock. */
export function now(): Date {
  return clock();
}

/** `YYYY-MM-DDTHH:MM:SSZ` for `date` in UTC. */
export function utcTimestamp(date: Date = now()): string {
  return date.toISOString().slice(0, 19) + "Z";
}

/** `YYYY-MM-DD` of `date` in the local time zone. */
export function localDate(date: Date = now()): string {
  const y = String(date.getFullYear()).padStart(4, "0");
  const m = String(date.getMonth() + 1).padStart(2, "0");
  const d = String(date.getDate()).padStart(2, "0");
  return `${y}-${m}-${d}`;
}

/** Milliseconds since the epoch of a stored UTC timestamp, or NaN. */
export function parseTimestamp(value: string): number {
  return TIMESTAMP.test(value) ? Date.parse(value) : Number.NaN;
}

/** Whole days between two `YYYY-MM-DD` dates (b - a). */
export function daysBetween(a: string, b: string): number {
  const ta = Date.parse(a + "T00:00:00Z");
  const tb = Date.parse(b + "T00:00:00Z");
  return Math.round((tb - ta) / 86_400_000);
}
