/**
 * Clock rules: timestamps are UTC whole seconds; calendar dates (run dates,
 * archive months, the brief) follow the local date, as the reference does.
 * BIMRI_NOW (an ISO timestamp) pins the clock for tests.
 */

/** UTC timestamp grammar of authority records. */
export const TIMESTAMP = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$/;
/** Calendar date grammar. */
export const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

/** The current instant (BIMRI_NOW overrides it for tests). */
export function now(): Date {
  let pinned: string | undefined;
  try {
    pinned = Deno.env.get("BIMRI_NOW");
  } catch {
    pinned = undefined;
  }
  if (pinned) {
    const parsed = new Date(pinned);
    if (!Number.isNaN(parsed.getTime())) return parsed;
  }
  return new Date();
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
