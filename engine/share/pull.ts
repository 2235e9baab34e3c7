/**
 * One pull's decisions under the engine lock: how each imported record
 * relates to the key's local generation (apply, no-op, join or raise the
 * owner's question, an owner's answer from elsewhere), and the commits of
 * the decided effects through the commit protocol.
 */
import { BimriError } from "../errors.ts";
import { faultPoint } from "../store/fault.ts";
import type { Store } from "../store/store.ts";
import { applyPendingProposals, commitProposalEffect } from "../memory/commit.ts";
import { closeRun } from "../memory/close_run.ts";
import { startRun } from "../memory/start_run.ts";
import { propose, type ProposeOptions } from "../memory/propose.ts";
import { textScreenOf } from "../guard/policy.ts";
import {
  newProposalBatch,
  type ProposalBatch,
  writeProposalBatch,
} from "../memory/proposal_batch.ts";
import { refreshView } from "../memory/view_sync.ts";
import { requireProposal } from "../records/proposal.ts";
import { findLive } from "../memory/residency.ts";
import { raiseStaleBaseConflict } from "../memory/conflicts.ts";
import { writeDecision } from "../memory/decision_record.ts";
import { appendProposeMarker, readRunLog, scanRunLog } from "../memory/run_log.ts";
import { listConflictIds, readConflict, readResolution } from "../records/conflict.ts";
import { resolveConflict } from "../memory/resolve.ts";
import {
  asAnswered,
  asCandidate,
  classifyRecord,
  confirmedByAnswer,
  sameContent,
  sharedEntryOf,
} from "./classify.ts";
import { eventId, importActor, isImportActor, parseEventId } from "./ids.ts";
import type { SharedEntry, ShareRecord } from "./record.ts";
import { isProblem, readRecordFile, type ShareProblem } from "./scan.ts";
import { keysOf } from "./state.ts";
import type { ImportCounts, ShareContext } from "./context.ts";
import { vectorCovers } from "./vector.ts";
import type { TrustQuestion } from "./trust.ts";
import { isOwnerAnswer, needsOwner } from "./governance.ts";
import { pathExists } from "../store/files.ts";
import { proposalContent } from "./classify.ts";
import { importInput } from "./import_input.ts";
import { saveState } from "../store/store.ts";
import { lineHash } from "../model/text.ts";
import { type ContestCandidate, contestCandidates } from "../memory/contest_batch.ts";
import { commitPlainTogether } from "../memory/commit_batch.ts";

/** What a pull did. */
export type PullResult = ImportCounts & {
  imported: number;
  /** New conflict IDs raised by this pull. */
  conflictIds: string[];
  problems: ShareProblem[];
  /** Records still waiting (their causal predecessors have not arrived). */
  blocked: number;
  /** Replicas whose records wait for the owner's trust (trust.ts). */
  questions?: TrustQuestion[];
  /** Records left for the next pull by its cap (`share pull --max N`). */
  remaining?: number;
};

/** Proposals an import run may stage before it is closed and a new one started. */
const RUN_PROPOSALS = 900;

/** An import run of one replica: its handle, how many proposals it staged, their keys. */
export type ImportRun = { run: string; proposals: number; keys: Set<string> };

/** One pull under the engine lock. */
export class Pull {
  readonly result: PullResult = {
    imported: 0,
    applied: 0,
    noop: 0,
    superseded: 0,
    conflicts: 0,
    held: 0,
    resolved: 0,
    conflictIds: [],
    problems: [],
    blocked: 0,
  };
  /** Effects decided but not committed yet, by key (a later record may supersede them). */
  readonly pendingApply = new Map<string, ShareRecord>();
  readonly runs = new Map<string, ImportRun>();
  /** Contested records whose question is raised after the pull's commits. */
  deferred: { record: ShareRecord; event: string }[] = [];
  readonly deferredKeys = new Set<string>();
  /** Open conflicts with import candidates by key, read once per pull. */
  openByKey: Map<string, string[]> | null = null;
  /** Open stale-base conflicts by key and live hash (the newest of each), read once per pull. */
  staleBase: Map<string, { id: string; n: number }> | null = null;
  staleBaseUpTo = 0;
  readonly keys: Record<string, string[]>;

  /** Candidates a killed pull raised without naming them, by event: completed, never asked again. */
  readonly healed = new Map<string, { pid: string; conflictId: string }>();
  /** Records a killed pull contested and the owner's answer already closed: never asked again. */
  readonly settled = new Set<string>();

  constructor(readonly store: Store, readonly ctx: ShareContext) {
    this.keys = keysOf(ctx);
    if (ctx.state.pulling) this.heal();
  }

  /**
   * After a pull killed part-way: every import proposal that is a candidate
   * of an open question but not named in the share state (the pull died
   * between raising the question and saving) is named again, by the record
   * its rationale cites, so an answer from another clone still closes it and
   * the record's next import joins nothing twice.
   */
  heal(): void {
    for (const id of listConflictIds(this.store)) {
      const conflict = readConflict(this.store, id);
      if (!conflict || conflict.type !== "stale-base") continue;
      const answered = readResolution(this.store, id) !== null;
      for (const pid of conflict.proposal_ids) {
        if (this.ctx.state.candidates[pid] !== undefined) continue;
        const p = requireProposal(this.store.paths, pid).proposal;
        if (!isImportActor(p.actor)) continue;
        const m = /^Imported from replica ([a-z2-7]{26}) record ([0-9]+) /.exec(p.rationale);
        if (!m) continue;
        const event = eventId(m[1], Number(m[2]));
        if (answered) {
          // Its question was raised and answered by the killed pull (a
          // question it raised mid-pull, before the cursor was saved): the
          // record is settled; asking again would ask the owner twice.
          this.settled.add(event);
          continue;
        }
        this.ctx.state.candidates[pid] = event;
        this.healed.set(event, { pid, conflictId: id });
      }
    }
  }

  /** True when open question `conflictId` waits for its healed record (completeHealed). */
  healing(conflictId: string): boolean {
    for (const h of this.healed.values()) if (h.conflictId === conflictId) return true;
    return false;
  }

  /** Completes a question a killed pull raised for `record`: true when there was one. */
  completeHealed(record: ShareRecord, event: string): boolean {
    const healed = this.healed.get(event);
    if (!healed) return false;
    this.healed.delete(event);
    if (confirmedByAnswer(record.entry) && isOwnerAnswer(record)) {
      // An owner's answer from elsewhere was being applied: answer the question with it.
      this.answerWith(healed.conflictId, healed.pid);
      delete this.ctx.state.candidates[healed.pid];
      this.keys[record.key] = [event];
      return true;
    }
    const events = this.keys[record.key] ?? [];
    if (!events.includes(event)) this.keys[record.key] = [...events, event];
    this.result.conflicts++;
    return true;
  }

  /** Resolves `conflictId` choosing import candidate `pid` as the owner's answer (T:confirmed). */
  answerWith(conflictId: string, pid: string): void {
    const commit = (s: Store, id: string) => {
      const proposal = requireProposal(s.paths, id).proposal;
      return commitProposalEffect(s, proposal, { humanConfirmed: true }).revision;
    };
    resolveConflict(this.store, conflictId, pid, true, commit, true);
    this.result.applied++;
  }

  liveContent(key: string): SharedEntry | null {
    const live = findLive(this.store.head.view, this.store.state, key);
    return sharedEntryOf(live?.entry ?? null);
  }

  currentContent(key: string): SharedEntry | null {
    const pending = this.pendingApply.get(key);
    return pending ? pending.entry : this.liveContent(key);
  }

  /** Decides one record (its causal predecessors are already processed). */
  process(record: ShareRecord): void {
    const key = record.key;
    const event = eventId(record.replica, record.seq);
    const events = this.keys[key] ?? [];
    this.result.imported++;
    if (this.healed.size > 0 && this.completeHealed(record, event)) return;
    if (this.settled.delete(event)) {
      if (!events.includes(event)) this.keys[key] = [...events, event];
      return;
    }
    const content = this.currentContent(key);
    const kind = classifyRecord(record, { events, content });
    // An answer for a key whose question this pull deferred raises it first (deferContest).
    if (record.kind === "resolution" && this.deferredKeys.has(key)) this.raiseDeferred(key);
    // A question a killed pull raised for a record later in this order is
    // not open yet for the records before it (replayed in the same order).
    const open = kind === "apply"
      ? this.openImportConflicts(key).filter((id) => !this.healing(id))
      : [];
    if (kind === "apply" && this.deferredKeys.has(key)) {
      this.deferContest(record, event);
      this.keys[key] = [...events, event];
      return;
    }
    if (open.length > 0 && record.kind === "resolution" && this.answers(record, open)) {
      this.applyResolution(record, event);
      return;
    }
    if (open.length > 0) {
      // While the owner's question on this key is open, later changes join it
      // as candidates (a new question when the live value moved since), so
      // the owner decides among all of them once.
      this.deferContest(record, event);
      this.keys[key] = [...events, event];
      return;
    }
    if (kind === "apply" && needsOwner(record, content) && !sameContent(record.entry, content)) {
      // Memory the owner confirmed here changes only by the owner's answer (governance.ts).
      this.deferContest(record, event);
      return;
    }
    if (kind === "apply" && record.kind === "resolution") {
      this.applyResolution(record, event);
      return;
    }
    if (kind === "apply" && confirmedByAnswer(record.entry) && !isOwnerAnswer(record)) {
      // A claim confirmed by an owner's answer elsewhere, carried by a record
      // that is not that answer (a seed, a change): here only the owner may
      // confirm it, so it is put to the owner as a candidate (working), never
      // applied as if answered.
      this.deferContest({ ...record, entry: asCandidate(record.entry) }, event);
      return;
    }
    if (kind === "apply") {
      this.keys[key] = [event];
      if (sameContent(record.entry, content)) {
        this.result.noop++;
        return;
      }
      if (this.pendingApply.has(key)) this.result.superseded++;
      this.pendingApply.set(key, record);
      return;
    }
    if (kind === "noop") {
      this.keys[key] = [...events, event];
      this.result.noop++;
      return;
    }
    if (events.some((e) => this.succeeds(e, record))) {
      // Imported late (it waited behind a gap): a record that saw it is already current.
      this.result.superseded++;
      return;
    }
    this.deferContest(record, event);
  }

  /**
   * Questions are raised after the pull's effects are committed together
   * (one sync per replica instead of one commit per contested key); later
   * records of the key join the deferred question, as they would join it
   * once raised.
   */
  deferContest(record: ShareRecord, event: string): void {
    this.deferred.push({ record, event });
    this.deferredKeys.add(record.key);
  }

  /** Commits what is pending and raises the deferred questions (of `key` only, when given). */
  raiseDeferred(key?: string): void {
    const due = key === undefined
      ? this.deferred
      : this.deferred.filter((d) => d.record.key === key);
    if (due.length === 0) return;
    this.commitPending(key === undefined ? [...this.pendingApply.keys()] : [key]);
    this.deferred = key === undefined ? [] : this.deferred.filter((d) => d.record.key !== key);
    if (key === undefined) this.deferredKeys.clear();
    else this.deferredKeys.delete(key);
    if (key === undefined) faultPoint("share-before-contests");
    this.contestAll(due);
  }

  /**
   * Contests `due` in order as few batches as the import runs allow: each
   * replica's candidates are staged as one proposal batch, then every staged
   * candidate is raised at once (contest_batch.ts). A key an import run
   * already proposed moves the replica to a new run, which first raises what
   * is staged so far (closing a run would sync its staged candidates).
   */
  contestAll(due: { record: ShareRecord; event: string }[]): void {
    const staged = new Map<string, { run: ImportRun; batch: ProposalBatch }>();
    let raised: { record: ShareRecord; event: string; id: string; run: ImportRun }[] = [];
    const raiseStaged = () => {
      for (const { batch } of staged.values()) writeProposalBatch(this.store, batch);
      staged.clear();
      if (raised.length > 0) this.raiseAll(raised);
      raised = [];
    };
    for (const { record, event } of due) {
      const current = this.runs.get(record.replica);
      if (current && (current.keys.has(record.key) || current.proposals + 1 > RUN_PROPOSALS)) {
        raiseStaged();
      }
      const run = this.runFor(record.replica, record.key);
      let open = staged.get(record.replica);
      if (open === undefined || open.run !== run) {
        open = { run, batch: newProposalBatch(run.run) };
        staged.set(record.replica, open);
      }
      const options: ProposeOptions = { freshKey: true, deferStateSave: true };
      if (record.entry?.tier === 3 && this.liveContent(record.key)?.tier !== 3) {
        // A new pattern's ID is allocated from the proposal files on disk.
        writeProposalBatch(this.store, open.batch);
      } else options.batch = open.batch;
      const id = this.stage(run, record, options);
      if (id !== null) raised.push({ record, event, id, run });
    }
    raiseStaged();
    saveState(this.store.paths, this.store.state);
  }

  /** Raises (or joins) the stale-base questions of staged candidates, in order. */
  raiseAll(items: { record: ShareRecord; event: string; id: string; run: ImportRun }[]): void {
    const candidates: ContestCandidate[] = items.map(({ record, id }) => {
      const live = findLive(this.store.head.view, this.store.state, record.key);
      return {
        candidateId: id,
        candidateBytes: requireProposal(this.store.paths, id).bytes,
        key: record.key,
        live: {
          line: live?.raw ?? null,
          storage: live?.storage ?? "absent",
          archiveProposalId: live?.archiveProposalId,
          archiveDate: live?.archiveDate,
        },
      };
    });
    const open = this.openStaleBase();
    const outcomes = contestCandidates(
      this.store,
      candidates,
      (key, hash) => open.get(`${key}\n${hash}`) ?? null,
    );
    for (const [i, { record, event, id }] of items.entries()) {
      const conflictId = outcomes[i].conflictId;
      const n = Number(conflictId.slice(1));
      const hash = lineHash(candidates[i].live.line);
      this.openStaleBase().set(`${record.key}\n${hash}`, { id: conflictId, n });
      this.staleBaseUpTo = Math.max(this.staleBaseUpTo, n);
      const index = this.openByKey?.get(record.key);
      if (this.openByKey !== null && !index?.includes(conflictId)) {
        this.openByKey.set(record.key, [...index ?? [], conflictId]);
      }
      // Named in the share state when the pull saves it (a killed pull: see heal).
      this.ctx.state.candidates[id] = event;
      this.result.conflicts++;
      if (!this.result.conflictIds.includes(conflictId)) {
        this.result.conflictIds.push(conflictId);
      }
    }
    faultPoint("share-after-raise");
  }

  /** True when shared event `later` saw `record` (a later seq of its replica, or its vector). */
  succeeds(later: string, record: ShareRecord): boolean {
    const { replica, seq } = parseEventId(later);
    if (replica === record.replica) return seq > record.seq;
    const read = readRecordFile(this.ctx, replica, seq);
    return !isProblem(read) && (read.vector[record.replica] ?? 0) >= record.seq;
  }

  /** Commits the pending effect of `key`, if any. */
  flush(key: string): void {
    this.commitPending([key]);
  }

  /**
   * Commits the pending effects of `keys` through the normal protocol, in as
   * few syncs as the runs allow: each replica's effects are staged as the
   * proposals of one import run (distinct keys, at most RUN_PROPOSALS), then
   * that run is synced once. Every accepted effect still takes its own
   * revision (the protocol's unit); what is shared is the sync's fixed cost
   * (reading the run, proving its decisions) and the view, written once per
   * sync instead of once per effect. Staging right before its own sync keeps
   * every proposal's base the head it is applied to.
   */
  commitPending(keys: string[]): void {
    const byReplica = new Map<string, ShareRecord[]>();
    for (const key of keys) {
      const record = this.pendingApply.get(key);
      if (!record) continue;
      this.pendingApply.delete(key);
      if (sameContent(record.entry, this.liveContent(key))) {
        this.result.noop++;
        continue;
      }
      if (confirmedByAnswer(record.entry) && isOwnerAnswer(record)) {
        const event = eventId(record.replica, record.seq);
        if (!this.completeHealed(record, event)) this.confirmAsAnswered(record);
        continue;
      }
      const list = byReplica.get(record.replica) ?? [];
      list.push(record);
      byReplica.set(record.replica, list);
    }
    for (const replica of [...byReplica.keys()].sort()) {
      const records = byReplica.get(replica)!;
      for (let at = 0; at < records.length; at += RUN_PROPOSALS) {
        const chunk = records.slice(at, at + RUN_PROPOSALS);
        const run = this.runForBatch(replica, chunk.map((r) => r.key));
        const batch = newProposalBatch(run.run);
        let staged = 0;
        for (const record of chunk) {
          run.keys.add(record.key);
          run.proposals++;
          // A new pattern's ID is allocated from the proposal files on disk:
          // what the batch holds so far is written first.
          const newPattern = record.entry?.tier === 3 &&
            findLive(this.store.head.view, this.store.state, record.key)?.entry.tier !== 3;
          if (newPattern) writeProposalBatch(this.store, batch);
          const options: ProposeOptions = { freshKey: true, deferStateSave: true };
          if (!newPattern) options.batch = batch;
          if (this.stage(run, record, options) !== null) staged++;
        }
        writeProposalBatch(this.store, batch);
        if (staged === 0) continue;
        // Plain effects land together in one revision; the rest one by one.
        let together = 0;
        for (let n = 1; n > 0; together += n) n = commitPlainTogether(this.store, run.run);
        const summary = applyPendingProposals(this.store, run.run, { deferView: true });
        this.store.state.active_runs[run.run].base_revision = this.store.head.revision;
        const applied = together + summary.applied;
        if (applied > 0) refreshView(this.store);
        this.result.applied += applied;
        this.result.held += summary.held;
        this.result.noop += staged - applied - summary.held;
      }
    }
  }

  /** An import run for `replica` with room for `keys`, none of which it has proposed yet. */
  runForBatch(replica: string, keys: string[]): ImportRun {
    let run = this.runs.get(replica);
    if (
      run &&
      (run.proposals + keys.length > RUN_PROPOSALS || keys.some((key) => run!.keys.has(key)))
    ) {
      this.closeImportRun(run);
      run = undefined;
    }
    if (!run) {
      const started = startRun(
        this.store,
        importActor(replica),
        undefined,
        textScreenOf(this.store.paths.root),
      );
      run = { run: started.run, proposals: 0, keys: new Set() };
      this.runs.set(replica, run);
    }
    return run;
  }

  /** An import run for `replica` in which `key` has no proposal yet. */
  runFor(replica: string, key: string): ImportRun {
    const run = this.runForBatch(replica, [key]);
    run.keys.add(key);
    run.proposals++;
    return run;
  }

  closeImportRun(run: ImportRun): void {
    closeRun(this.store, run.run, "success", `share pull imported ${run.proposals} records`);
  }

  /** Stages `record` as a proposal of `run`; null (reported) when it cannot be proposed. */
  stage(run: ImportRun, record: ShareRecord, options: ProposeOptions = {}): string | null {
    const input = importInput(
      run.run,
      record,
      findLive(this.store.head.view, this.store.state, record.key) !== null,
    );
    if (input === null) return null;
    // An import run observes the head it stages against (another replica's
    // import may have moved the key since this run last synced).
    this.store.state.active_runs[run.run].base_revision = this.store.head.revision;
    try {
      return propose(this.store, input, textScreenOf(this.store.paths.root), options).proposal_id;
    } catch (error) {
      if (!(error instanceof BimriError)) throw error;
      this.result.held++;
      this.result.problems.push({
        file: `.bimri-share/${record.replica}/${String(record.seq).padStart(8, "0")}.json`,
        message: `could not be proposed here (${error.message})`,
      });
      return null;
    }
  }

  /**
   * A claim the owner confirmed in another clone by answering a conflict
   * (`T:confirmed` with the agent's source): the same entry is reached here
   * the same way, as the owner's answer to a question on the key. The claim
   * is staged as the candidate it was, joins (or raises) the key's question,
   * and that question is answered with it at once.
   */
  confirmAsAnswered(record: ShareRecord): void {
    const entry = record.entry;
    if (entry === null || entry.tier === 3) return;
    const run = this.runFor(record.replica, record.key);
    const id = this.stage(run, { ...record, entry: { ...entry, trust: "working" } });
    if (id === null) return;
    // A question already open on the key (this clone's own agents', say) is
    // one the answer never saw: the claim joins it for the owner here.
    const joins = this.openQuestionOn(record.key);
    const conflictId = this.raise(run, id, record.key);
    if (joins) {
      this.result.conflicts++;
      return;
    }
    faultPoint("share-before-answer");
    this.answerWith(conflictId, id);
  }

  /** True when a stale-base question on `key` is open here. */
  openQuestionOn(key: string): boolean {
    for (const at of this.openStaleBase().keys()) {
      if (at.startsWith(`${key}\n`)) return true;
    }
    return false;
  }

  /** Raises (or joins) the stale-base question on `key` with candidate `id` of `run`. */
  raise(run: ImportRun, id: string, key: string): string {
    const loaded = requireProposal(this.store.paths, id);
    const log = scanRunLog(run.run, readRunLog(this.store.paths, run.run));
    if (!log.proposalMarkers.includes(id)) {
      const p = loaded.proposal;
      appendProposeMarker(this.store.paths, run.run, id, p.operation, p.key, p.base_hash, p.text);
    }
    const live = findLive(this.store.head.view, this.store.state, key);
    let hash = "";
    const raised = raiseStaleBaseConflict(this.store, id, loaded.bytes, key, {
      line: live?.raw ?? null,
      storage: live?.storage ?? "absent",
      archiveProposalId: live?.archiveProposalId,
      archiveDate: live?.archiveDate,
    }, (currentHash) => {
      hash = currentHash;
      return this.openStaleBase().get(`${key}\n${currentHash}`) ?? null;
    });
    const n = Number(raised.conflictId.slice(1));
    this.openStaleBase().set(`${key}\n${hash}`, { id: raised.conflictId, n });
    this.staleBaseUpTo = Math.max(this.staleBaseUpTo, n);
    writeDecision(this.store.paths, id, "contested", {
      conflict_id: raised.conflictId,
      revision: this.store.head.revision,
    }, true);
    const index = this.openByKey?.get(key);
    if (this.openByKey !== null && !index?.includes(raised.conflictId)) {
      this.openByKey.set(key, [...index ?? [], raised.conflictId]);
    }
    return raised.conflictId;
  }

  /**
   * An owner's answer from another replica: close this replica's open
   * conflicts on the key whose candidates the answer saw, with the same
   * effect, then make the answer current.
   */
  applyResolution(record: ShareRecord, event: string): void {
    const key = record.key;
    if (this.pendingApply.has(key)) {
      this.pendingApply.delete(key);
      this.result.superseded++;
    }
    for (const id of listConflictIds(this.store)) {
      const conflict = readConflict(this.store, id);
      if (!conflict || conflict.key !== key || conflict.type !== "stale-base") continue;
      if (readResolution(this.store, id) !== null) continue;
      const answered = conflict.proposal_ids.every((pid) => {
        const candidate = this.ctx.state.candidates[pid];
        return candidate !== undefined &&
          (vectorCovers(record.vector, candidate) || record.resolves.includes(candidate));
      });
      if (!answered) continue;
      this.closeConflict(id, conflict.proposal_ids, key, record.entry);
      faultPoint("share-after-answer");
    }
    this.keys[key] = [event];
    if (!sameContent(record.entry, this.liveContent(key))) {
      this.pendingApply.set(key, record);
      this.flush(key);
    } else {
      this.result.noop++;
    }
  }

  /**
   * Resolves local conflict `id` the way the owner answered it elsewhere: the
   * candidate carrying the answer when the live value has not moved, else
   * `dismiss` (the answer itself is then imported as the key's new value).
   */
  closeConflict(id: string, candidates: string[], key: string, answer: SharedEntry | null): void {
    const chosen = candidates.find((pid) => {
      const p = requireProposal(this.store.paths, pid).proposal;
      return sameContent(asAnswered(proposalContent(p)), answer);
    });
    const commit = (s: Store, pid: string) => {
      const proposal = requireProposal(s.paths, pid).proposal;
      return commitProposalEffect(s, proposal, { humanConfirmed: true }).revision;
    };
    const live = this.liveContent(key);
    const choices = [chosen ?? (sameContent(live, answer) ? "current" : "dismiss")];
    if (choices[0] !== "dismiss") choices.push("dismiss");
    for (const choice of choices) {
      try {
        resolveConflict(this.store, id, choice, true, commit, true);
      } catch (error) {
        if (!(error instanceof BimriError)) throw error;
        continue;
      }
      for (const pid of candidates) delete this.ctx.state.candidates[pid];
      const index = this.openByKey?.get(key);
      if (index) this.openByKey!.set(key, index.filter((c) => c !== id));
      for (const [at, open] of this.staleBase ?? []) {
        if (open.id === id) this.staleBase!.delete(at);
      }
      this.result.resolved++;
      return;
    }
  }

  /** The open stale-base conflicts by `<key>\n<current hash>` (see raiseStaleBaseConflict). */
  openStaleBase(): Map<string, { id: string; n: number }> {
    if (this.staleBase === null) {
      this.staleBase = new Map();
      for (const id of listConflictIds(this.store)) this.indexConflict(id);
    }
    // Conflicts raised since without this index (a sync of the pull's own runs).
    for (;;) {
      const id = `C${String(this.staleBaseUpTo + 1).padStart(6, "0")}`;
      if (!pathExists(this.store.paths.conflict(id))) break;
      this.indexConflict(id);
    }
    return this.staleBase;
  }

  indexConflict(id: string): void {
    const n = Number(id.slice(1));
    this.staleBaseUpTo = Math.max(this.staleBaseUpTo, n);
    if (readResolution(this.store, id) !== null) return;
    const conflict = readConflict(this.store, id);
    if (!conflict || conflict.type !== "stale-base") return;
    const at = `${conflict.key}\n${conflict.current_hash}`;
    if ((this.staleBase!.get(at)?.n ?? 0) < n) this.staleBase!.set(at, { id, n });
  }

  /** True when `record` saw every candidate of the conflicts `ids`. */
  answers(record: ShareRecord, ids: string[]): boolean {
    return ids.every((id) => {
      const conflict = readConflict(this.store, id);
      return conflict !== null && conflict.proposal_ids.every((pid) => {
        const candidate = this.ctx.state.candidates[pid];
        return candidate !== undefined &&
          (vectorCovers(record.vector, candidate) || record.resolves.includes(candidate));
      });
    });
  }

  /**
   * Open conflicts on `key` that hold candidates from other clones, which a
   * record that does not answer them must join instead of moving the live
   * value (the owner could no longer keep it, and every clone would be stuck).
   */
  openImportConflicts(key: string): string[] {
    const candidates = this.ctx.state.candidates;
    if (this.openByKey === null) {
      // Read once per pull (every conflict file), then kept up to date.
      this.openByKey = new Map();
      if (Object.keys(candidates).length > 0) {
        for (const id of listConflictIds(this.store)) {
          const conflict = readConflict(this.store, id);
          if (!conflict || conflict.type !== "stale-base") continue;
          if (readResolution(this.store, id) !== null) continue;
          if (!conflict.proposal_ids.some((p) => candidates[p] !== undefined)) continue;
          this.openByKey.set(conflict.key, [...this.openByKey.get(conflict.key) ?? [], id]);
        }
      }
    }
    return [...this.openByKey.get(key) ?? []];
  }

  finish(): void {
    this.raiseDeferred();
    this.commitPending([...this.pendingApply.keys()]);
    for (const run of this.runs.values()) this.closeImportRun(run);
    this.runs.clear();
  }
}
