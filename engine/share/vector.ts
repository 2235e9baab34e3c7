/**
 * Version vectors ({replica: highest seq seen}) and the causal order of
 * records: a record is ready once every record its vector names is known.
 */
import { parseEventId } from "./ids.ts";

/** Highest seq seen per replica. */
export type Vector = Record<string, number>;

/** True when `vector` has seen event `event` (`<replica>:<seq>`). */
export function vectorCovers(vector: Vector, event: string): boolean {
  const { replica, seq } = parseEventId(event);
  return (vector[replica] ?? 0) >= seq;
}

/** The first replica whose entry in `next` is lower than in `previous`, or null. */
export function backwardsEntry(previous: Vector, next: Vector): string | null {
  for (const [replica, seq] of Object.entries(previous)) {
    if ((next[replica] ?? 0) < seq) return replica;
  }
  return null;
}

/** True when every record `vector` names (except `own`'s) has been processed. */
export function causallyReady(vector: Vector, own: string, processed: Vector): boolean {
  for (const [replica, seq] of Object.entries(vector)) {
    if (replica === own) continue;
    if ((processed[replica] ?? 0) < seq) return false;
  }
  return true;
}

/** A vector with entries sorted by replica (stable JSON). */
export function sortedVector(vector: Vector): Vector {
  const out: Vector = {};
  for (const replica of Object.keys(vector).sort()) {
    if (vector[replica] > 0) out[replica] = vector[replica];
  }
  return out;
}
