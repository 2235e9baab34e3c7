/** The proposal an imported record stands for: the propose input of an import run. */
import type { ProposeInput } from "../memory/propose.ts";
import type { ShareRecord } from "./record.ts";

/**
 * What `run` proposes for `record` (`live`: the key has a current
 * generation here), or null when it has nothing to propose (a close of a key
 * absent here).
 */
export function importInput(run: string, record: ShareRecord, live: boolean): ProposeInput | null {
  const entry = record.entry;
  const input: ProposeInput = {
    run,
    key: record.key,
    operation: record.operation === "close" || entry === null ? "close" : "set",
    rationale: `Imported from replica ${record.replica} record ${record.seq} (${
      record.run ?? record.kind
    } by ${record.actor}).`,
  };
  if (entry !== null) {
    input.newSubject = !live;
    input.tier = String(entry.tier);
    input.text = entry.text;
    if (entry.tier === 3) {
      input.confidence = entry.confidence;
      input.observations = String(entry.observations);
      if (entry.evidence.length > 0) input.evidence = entry.evidence.join(",");
      input.falsifier = entry.falsifier;
    } else {
      input.trust = entry.trust;
      // System provenance cannot be proposed: confirmed system memory is the owner's word.
      input.source = entry.trust === "confirmed" && entry.source === "system"
        ? "user"
        : entry.source;
      input.tags = entry.tags.join(",");
      if (entry.tier === 1) input.kind = entry.kind;
      else {
        input.importance = String(entry.importance);
        input.status = entry.status;
      }
    }
  } else if (!live) {
    return null;
  }
  return input;
}
