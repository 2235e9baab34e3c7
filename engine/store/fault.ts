/**
 * Fault injection for tests: when BIMRI_FAULT names a durable step, the
 * process exits at once at that step, as if the machine had lost power; when
 * it names a platform limit, the engine behaves as on such a platform.
 */

let configured: string | null | undefined;

function configuredFault(): string | null {
  if (configured === undefined) {
    try {
      configured = Deno.env.get("BIMRI_FAULT") ?? null;
    } catch {
      configured = null;
    }
  }
  return configured;
}

/** Exits the process with code 86 when `BIMRI_FAULT` equals `point`. */
export function faultPoint(point: string): void {
  if (configuredFault() === point) Deno.exit(86);
}

/** True when `BIMRI_FAULT` asks to behave as if `limit` held (e.g. "no-hard-links"). */
export function simulatedLimit(limit: string): boolean {
  return configuredFault() === limit;
}
