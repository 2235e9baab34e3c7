/**
 * Crash injection for tests: when BIMRI_FAULT names a durable step, the
 * process exits at once at that step, as if the machine had lost power.
 */

let configured: string | null | undefined;

/** Exits the process with code 86 when `BIMRI_FAULT` equals `point`. */
export function faultPoint(point: string): void {
  if (configured === undefined) {
    try {
      configured = Deno.env.get("BIMRI_FAULT") ?? null;
    } catch {
      configured = null;
    }
  }
  if (configured === point) Deno.exit(86);
}
