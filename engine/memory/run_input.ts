/**
 * Checks of what run verbs are given: an active run handle and an
 * importance. Kept apart so `journal` loads only these.
 */
import { BimriError } from "../errors.ts";
import { requireRunId } from "../model/ids.ts";
import type { State } from "../model/state.ts";

/** Refuses unless `run` is a well-formed handle of an active run. */
export function requireActiveRun(state: State, runInput: string): string {
  const run = requireRunId(runInput);
  if (!state.active_runs[run]) throw new BimriError("unknown-run", `${run} is not an active run.`);
  return run;
}

/** Validates an importance value 1-5 (strings from the CLI accepted). */
export function parseImportance(value: string | number | undefined, fallback = 3): number {
  if (value === undefined) return fallback;
  const n = typeof value === "number" ? value : Number(value);
  if (
    !Number.isInteger(n) || n < 1 || n > 5 ||
    (typeof value === "string" && !/^[0-9]+$/.test(value.trim()))
  ) {
    throw new BimriError("invalid-input", "importance must be 1 through 5.");
  }
  return n;
}
