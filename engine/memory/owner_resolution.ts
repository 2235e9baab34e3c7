/**
 * Whether an owner's answer to a conflict is still being applied: while it
 * is, later intents on the same key are held. `propose` and the commit loop
 * both ask, so this lives apart from the commit machinery.
 */
import { parseAnyEntry, parseView } from "../model/hot.ts";
import { isJsonObject, type JsonObject } from "../model/json.ts";
import { listNames } from "../store/files.ts";
import { knownApplyingResolutions } from "../integrity/everyday.ts";
import { readRecord } from "../store/records.ts";
import { readRevision, type Store } from "../store/store.ts";
import { humanConfirmed } from "./effect.ts";
import { proposalEquivalent, readProposal } from "../records/proposal.ts";
import { coldRecordOf } from "../model/state.ts";

/**
 * True when an owner resolution on `key` is `applying` and its chosen effect
 * is not committed yet (later same-key intents are held meanwhile).
 */
export function ownerResolutionInProgress(store: Store, key: string): boolean {
  // A command that proved the store healthy knows the applying resolutions
  // (usually none); otherwise every resolution is read.
  const ids = knownApplyingResolutions(store) ??
    listNames(store.paths.folder("resolutions")).flatMap((name) => {
      const m = /^(C[0-9]{6})\.json$/.exec(name);
      return m ? [m[1]] : [];
    });
  for (const id of ids) {
    const record = readRecord(store.paths.resolution(id), `resolution ${id}`);
    const r = record?.value;
    if (!r || r.status !== "applying" || typeof r.choice !== "string") continue;
    const candidates = Array.isArray(r.proposal_ids) ? r.proposal_ids : [];
    if (!candidates.includes(r.choice) || typeof r.intended_revision_after !== "number") continue;
    const conflict = readRecord(store.paths.conflict(id), `conflict ${id}`)?.value;
    if (!conflict || !isJsonObject(conflict) || conflict.key !== key) continue;
    if (!chosenEffectCommitted(store, r, key)) return true;
  }
  return false;
}

function chosenEffectCommitted(store: Store, resolution: JsonObject, key: string): boolean {
  const intended = resolution.intended_revision_after as number;
  if (intended > store.head.revision) return false;
  const chosen = readProposal(store.paths, resolution.choice as string)?.proposal;
  if (!chosen) return false;
  const text = intended === store.head.revision
    ? store.head.text
    : readRevision(store.paths, intended);
  if (text === null) return false;
  const view = parseView(text, store.state.entry_max_chars);
  const entry = view.entries.find((e) => e.entry.key === key)?.entry ?? null;
  const cold = coldRecordOf(store.state, key);
  const current = entry ?? (cold ? parseAnyEntry(cold.raw_line) : null);
  if (chosen.operation === "close") return current === null;
  if (chosen.operation === "touch") {
    return current?.tier === 2 && current.last_run === chosen.run_id;
  }
  return proposalEquivalent(humanConfirmed(chosen), current);
}
