/**
 * Proposals of one run staged together and written at once (a share import
 * stages hundreds): the batch, and its durable write in propose's order.
 */
import { BimriError } from "../errors.ts";
import { proposalId as formatProposalId } from "../model/ids.ts";
import type { JsonObject } from "../model/json.ts";
import { faultPoint } from "../store/fault.ts";
import { appendLine, createExclusiveMany, lstatOrNull, syncDir } from "../store/files.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import { invalidateAuditWitness, type Store } from "../store/store.ts";
import { afterProposalWrite, beforeProposalWrite } from "./pattern_ids.ts";

/**
 * Proposals of one run staged together (a share import). `writeProposalBatch`
 * writes them in the order one propose writes its own: every rationale entry,
 * then every proposal file, then every `[PROPOSE:]` marker, each group made
 * durable once instead of once per proposal. A crash in between leaves only
 * states a crash inside single proposes can leave (entries without their
 * proposal, proposal files without their marker), which the commit protocol
 * already finishes.
 */
export type ProposalBatch = {
  run: string;
  /** `[ID:]` rationale lines, in staging order. */
  entries: string[];
  /** Proposal records to create exclusively, in staging order. */
  files: { id: string; record: JsonObject }[];
  /** `[PROPOSE:]` marker lines, in staging order. */
  markers: string[];
  /** Number of the last proposal ID this batch took (0: none yet). */
  lastNumber: number;
};

/** An empty batch for `run`. */
export function newProposalBatch(run: string): ProposalBatch {
  return { run, entries: [], files: [], markers: [], lastNumber: 0 };
}

/**
 * Writes the staged proposals of `batch` (see ProposalBatch) and empties it.
 * Call under the engine lock, in the same command that staged them.
 */
export function writeProposalBatch(store: Store, batch: ProposalBatch): void {
  if (batch.files.length === 0) return;
  invalidateAuditWitness(store.paths);
  const logPath = store.paths.log(batch.run);
  appendLine(logPath, batch.entries.join("\n"));
  faultPoint("after-propose-entry");
  const patternsBefore = beforeProposalWrite(store.paths, null);
  // The folder is synced once below, before any marker names these files.
  const taken = createExclusiveMany(
    batch.files.map(({ id, record }) => ({
      path: store.paths.proposal(id),
      data: canonicalJson(record),
    })),
  );
  if (taken >= 0) {
    throw new BimriError("io", `proposal ${batch.files[taken].id} appeared while staging; retry.`);
  }
  syncDir(store.paths.folder("proposals"));
  afterProposalWrite(store.paths, patternsBefore, null);
  faultPoint("after-proposal-file");
  appendLine(logPath, batch.markers.join("\n"));
  batch.entries = [];
  batch.files = [];
  batch.markers = [];
}

/** The next free proposal number after the batch's last one (files and decisions hold theirs). */
export function nextBatchNumber(store: Store, batch: ProposalBatch): number {
  let n = batch.lastNumber + 1;
  while (
    n <= 999 &&
    (lstatOrNull(store.paths.proposal(formatProposalId(batch.run, n))) !== null ||
      lstatOrNull(store.paths.decision(formatProposalId(batch.run, n))) !== null)
  ) n++;
  if (n > 999) {
    throw new BimriError(
      "refused",
      `${batch.run} has exhausted its 999 proposal IDs; close it and start a new run.`,
    );
  }
  return n;
}
