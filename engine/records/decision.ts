/**
 * Read side of decision records, shared by memory/ and retrieval/.
 *
 * `.bimri/decisions/<proposal-id>.json`: the outcome types and the validating
 * reader. Writing (the `applying` -> final state machine) stays in
 * memory/decision_record.ts. Nothing here writes.
 */
import { BimriError } from "../errors.ts";
import type { JsonObject } from "../model/json.ts";
import { readRecord } from "../store/records.ts";
import type { StorePaths } from "../store/paths.ts";

/** Decision outcomes. */
export type Outcome = "applying" | "accepted" | "noop" | "held" | "contested";

/** A decision as stored (outcome-specific fields ride along). */
export type Decision = JsonObject & { proposal_id: string; outcome: Outcome };

/** Reads a decision; null when it does not exist. */
export function readDecision(paths: StorePaths, id: string): Decision | null {
  const record = readRecord(paths.decision(id), `decision ${id}`);
  if (record === null) return null;
  const value = record.value;
  if (value.record_type === "authority-quarantine") {
    throw new BimriError(
      "authority-recovery-needed",
      `decision ${id} is quarantined; restore it before continuing.`,
    );
  }
  const outcome = value.outcome;
  if (
    value.proposal_id !== id ||
    !["applying", "accepted", "noop", "held", "contested"].includes(outcome as string)
  ) {
    throw new BimriError("store-corrupt", `decision ${id} is invalid; run doctor.`);
  }
  return value as Decision;
}
