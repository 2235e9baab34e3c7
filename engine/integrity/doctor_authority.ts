/**
 * Doctor's checks of the authority records against the history: the record
 * graph, proposal bases, decision and resolution effects, conflict residency.
 */
import { BimriError } from "../errors.ts";
import { parseView } from "../model/hot.ts";
import { candidateSetMatches, readCandidateAt } from "../records/conflict.ts";
import { decodeUtf8Strict, lineHash, pyStrip } from "../model/text.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../model/json.ts";
import { readBytesOrNull } from "../store/files.ts";
import { revisionName } from "../model/ids.ts";
import {
  authorityIssues,
  collectFacts,
  type CollectOptions,
  factsFromBytes,
  hashCandidates,
  issueLine,
} from "./authority.ts";
import { decodeUtf8Fast, nativeSha256 } from "./bulk_read.ts";
import { type AuthorityKind, HOLD_REASONS, isStub } from "./schemas.ts";
import { FileAudit } from "./doctor_files.ts";
import {
  bindsResidency,
  type DecisionFacts,
  decisionFacts,
  isOwnNoop,
  type ProposalFacts,
  proposalFacts,
} from "./doctor_facts.ts";

/** How the audit labels a damaged authority record (the reference's doctor prefix). */
export const AUTHORITY_RECOVERY_NEEDED = "authority recovery needed: ";

/** The audits of authority records, after (and using) the audits of the files. */
export abstract class AuthorityAudit extends FileAudit {
  /**
   * Reads every authority record once, before the revisions: keeps the few
   * fields the effect checks need and queues their key lookups. Findings are
   * reported later, in checkAuthority, in the audit's usual order.
   */
  protected prepareAuthority(): void {
    // Compact fields of every parsed record; usability is filtered after validation.
    const compactProposals = new Map<string, ProposalFacts>();
    const compactDecisions = new Map<string, DecisionFacts>();
    const values = new Map<string, JsonObject>();
    const keep = (kind: AuthorityKind, id: string, value: JsonObject) => {
      if (kind === "proposal") compactProposals.set(id, proposalFacts(value));
      else if (kind === "decision") compactDecisions.set(id, decisionFacts(value));
      else values.set(`${kind}/${id}`, value);
    };
    const options: CollectOptions = {
      entries: (folder) => this.entries(folder),
      read: (path) => this.reader.read(path),
      decode: decodeUtf8Fast,
      hash: nativeSha256,
      lazySha: true,
      onValue: (kind, id, value) => {
        if (isStub(value)) {
          if (typeof value.recovery_file === "string" && !this.isShadowed(kind, id)) {
            this.stubEvidence.push({ kind, id, file: value.recovery_file });
          }
          return;
        }
        keep(kind, id, value);
      },
    };
    const facts = collectFacts(this.paths, null, new Set(), options);
    const shadow = this.shadow;
    if (shadow) {
      facts.records[shadow.kind].set(
        shadow.id,
        factsFromBytes(shadow.bytes, shadow.kind, shadow.id, "", { hash: nativeSha256 }),
      );
      try {
        const value = JSON.parse(new TextDecoder().decode(shadow.bytes)) as JsonValue;
        if (isJsonObject(value)) keep(shadow.kind, shadow.id, value);
      } catch {
        // Unparseable: its facts carry the problem, so it is not usable.
      }
      // A shadowed conflict may name candidates the lazy collection did not hash.
      hashCandidates(this.paths, facts.records, options);
    }
    // The facts are dropped after this pass (memory stays flat on long histories).
    this.graphIssues = authorityIssues(this.state, facts).map((issue) =>
      `${AUTHORITY_RECOVERY_NEEDED}${issueLine(issue)}`
    );
    const usable = (kind: AuthorityKind, id: string): boolean => {
      const f = facts.records[kind].get(id);
      return f !== undefined && !f.problem && !f.stub;
    };
    for (const id of facts.records.proposal.keys()) {
      const p = compactProposals.get(id);
      if (!p || !usable("proposal", id)) continue;
      this.proposals.set(id, p);
      if (p.baseStorage !== "cold") this.ask(p.baseRevision, p.key);
    }
    for (const id of facts.records.decision.keys()) {
      const d = compactDecisions.get(id);
      if (!d || !usable("decision", id)) continue;
      this.decisions.set(id, d);
      const p = this.proposals.get(id);
      if ((d.outcome === "accepted" || isOwnNoop(d)) && p) this.ask(d.revision, p.key);
    }
    for (
      const [kind, target] of [["conflict", this.conflicts], [
        "resolution",
        this.resolutions,
      ]] as const
    ) {
      for (const id of facts.records[kind].keys()) {
        const value = values.get(`${kind}/${id}`);
        if (value && usable(kind, id)) target.set(id, value);
      }
    }
    this.claims = this.residencyClaims();
    for (const [revision, conflictId] of this.claims) {
      this.ask(revision, this.conflicts.get(conflictId)!.key as string);
    }
  }

  /**
   * Where a conflict's live snapshot must still hold in its recorded
   * residency, as [revision, conflict] pairs: a contested decision's
   * revision, every answer's revision_before, and revision_after of an answer
   * that kept the live value (current or dismiss).
   */
  protected residencyClaims(): [number, string, string][] {
    const claims: [number, string, string][] = [];
    const bound = (id: unknown): id is string => {
      const c = typeof id === "string" ? this.conflicts.get(id) : undefined;
      return c !== undefined && bindsResidency(c);
    };
    for (const [id, d] of this.decisions) {
      if (d.outcome === "contested" && bound(d.conflictId) && typeof d.revision === "number") {
        claims.push([d.revision, d.conflictId, `decision ${id}`]);
      }
    }
    for (const [id, r] of this.resolutions) {
      if (!bound(id)) continue;
      if (typeof r.revision_before === "number") {
        claims.push([r.revision_before, id, `resolution ${id}`]);
      }
      const kept = r.choice === "current" || r.choice === "dismiss";
      if (r.status === "resolved" && kept && typeof r.revision_after === "number") {
        claims.push([r.revision_after, id, `resolution ${id}`]);
      }
    }
    return claims;
  }

  /**
   * The reference proves a conflict's snapshot where the history names it in
   * the residency the conflict recorded: a hot snapshot as that hot line, a
   * cold or absent one as no hot line. An answer recorded after the subject
   * cooled (or came back) is one it treats as damaged authority.
   */
  protected checkConflictResidency(): void {
    const head = this.state.head_revision;
    const reported = new Set<string>();
    for (const [revision, conflictId, by] of this.claims) {
      if (revision > head) continue; // Reported as beyond the head.
      // revision_before and revision_after of an answer are often the same revision.
      if (reported.has(`${by}/${revision}`)) continue;
      reported.add(`${by}/${revision}`);
      const c = this.conflicts.get(conflictId)!;
      const key = c.key as string;
      const line = this.keyLine(revision, key);
      if (line === undefined) continue; // A missing revision is reported on its own.
      const extra = isJsonObject(c.extra) ? c.extra : {};
      const storage = String(extra.current_storage);
      const current = typeof c.current_line === "string" ? c.current_line : null;
      const holds = storage === "hot"
        ? line !== null && current !== null && line.hash === lineHash(current)
        : line === null;
      if (holds) continue;
      this.errors.push(
        storage === "hot"
          ? `${by} names revision ${
            revisionName(revision)
          }, where the hot snapshot of ${key} that conflict ${conflictId} recorded is not in hot memory.`
          : `${by} names revision ${
            revisionName(revision)
          }, where ${key} is hot, though conflict ${conflictId} recorded it ${storage}.`,
      );
    }
  }

  protected checkAuthority(): void {
    this.errors.push(...this.graphIssues);
    const head = this.state.head_revision;
    const proposals = this.proposals;
    // Every revision the history points at must still exist (the reference's
    // rule): genesis, the head (reported on its own), each accepted decision's
    // and each resolved answer's revision.
    const referenced = new Set<number>([0]);
    for (const [id, p] of proposals) this.checkProposalBase(id, p);
    for (const [id, d] of this.decisions) {
      const p = proposals.get(id);
      if (d.outcome === "accepted" && d.revision <= head) referenced.add(d.revision);

      if (d.outcome === "applying") {
        this.warnings.push(
          `unfinished applying decision ${id} (an interrupted commit); the next sync or close finishes it.`,
        );
        continue;
      }
      const revision = d.revision; // Beyond the head: reported with the graph issues.
      if (p && typeof p.baseRevision === "number" && revision < p.baseRevision) {
        this.errors.push(`decision ${id} names revision ${revision}, before its proposal's base.`);
      }
      if (d.outcome === "accepted" && p && revision <= head) {
        this.checkAcceptedEffect(id, p, revision, d.resolutionId);
      }
      if (isOwnNoop(d) && p && revision <= head) this.checkNoopEffect(id, p, d);
      if (d.outcome === "held" && p && p.v51) {
        const hold = p.holdReason;
        const lateOnly = HOLD_REASONS.slice(3);
        if (hold !== null ? d.reason !== hold : !lateOnly.includes(d.reason as string)) {
          this.errors.push(`decision ${id} is held for a reason its proposal does not carry.`);
        }
      }
    }
    for (const [id, c] of this.conflicts) {
      const extra = c.extra;
      if (c.type === "manual-edit" && isJsonObject(extra) && Array.isArray(extra.recovery_files)) {
        for (const file of extra.recovery_files as string[]) {
          this.checkEvidenceFile(file, `conflict ${id}`);
        }
      }
      if (isJsonObject(extra) && extra.current_storage === "cold") {
        const bound = (this.archiveBy.get(String(extra.current_archive_proposal_id)) ?? []).some((
          r,
        ) =>
          r.by === extra.current_archive_proposal_id && r.date === extra.current_archive_date &&
          r.reason === "cooled" && r.raw === c.current_line
        );
        if (!bound) {
          this.errors.push(`conflict ${id}: its cold snapshot binds no cooled archive row.`);
        }
      }
    }
    for (const [id, r] of this.resolutions) {
      for (const field of ["revision_before", "revision_after", "intended_revision_after"]) {
        const value = r[field];
        if (r.status === "resolved" && field === "intended_revision_after") continue;
        // A resolved answer's revision_after beyond the head is a graph issue.
        if (r.status === "resolved" && field === "revision_after") continue;
        if (
          typeof value === "number" && value > head + (field === "intended_revision_after" ? 1 : 0)
        ) {
          this.errors.push(`resolution ${id} ${field} ${value} is beyond the head.`);
        }
      }
      if (r.status === "applying") {
        this.warnings.push(
          `resolution ${id} is applying (interrupted); repeat the same resolve to finish it.`,
        );
      }
      if (r.status === "resolved" && typeof r.revision_after === "number") {
        referenced.add(r.revision_after);
      }
      const choice = r.choice as string;
      if (r.status === "resolved" && choice !== "current" && choice !== "dismiss") {
        const d = this.decisions.get(choice);
        if (d && (d.outcome !== "accepted" || d.resolutionId !== id)) {
          // Not finalized from the answer yet: its own revision must hold the choice.
          const unproven = d.outcome === "contested" &&
            typeof r.revision_after === "number" && !this.answerHolds(id, choice, r.revision_after);
          this.errors.push(
            unproven
              ? `resolution ${id}: resolved conflict ${id} names revision ${
                revisionName(r.revision_after as number)
              }, but that revision does not contain the chosen proposal's effect.`
              : `resolution ${id} chose ${choice}, but that decision is not accepted by it.`,
          );
        }
      }
    }
    for (const n of [...referenced].sort((a, b) => a - b)) {
      if (n !== head && n <= head && !this.revisionHashes.has(n)) {
        this.errors.push(`referenced revision ${revisionName(n)}.md is missing.`);
      }
    }
    // A snapshot nothing accepted points at (above or below the head) is what
    // an interrupted commit or a superseded normalization leaves: kept, reported.
    referenced.add(head);
    for (const n of this.revisionHashes.keys()) {
      if (!referenced.has(n)) {
        this.warnings.push(
          `unreferenced immutable revision ${
            revisionName(n)
          }.md; it may be an interrupted snapshot or an unresolved applying commit.`,
        );
      }
    }
  }

  /**
   * Whether revision `after` holds the chosen candidate's effect on its
   * conflict's key (the proof a repeated resolve makes); true when it cannot
   * tell (a missing revision or record is reported on its own).
   */
  protected answerHolds(conflictId: string, choice: string, after: number): boolean {
    const p = this.proposals.get(choice);
    const key = this.conflicts.get(conflictId)?.key;
    if (!p || typeof key !== "string") return true;
    const found = this.keyLine(after, key);
    if (found === undefined) return true;
    if (p.operation === "close") return found === null;
    if (p.operation === "touch") {
      return found !== null && found.tier === 2 && found.lastRun === p.run;
    }
    // A chosen set may have landed cold (cooled by its own commit): absent proves nothing.
    return found === null || (p.tier === 3 ? found.tier === 3 : found.id === p.entryId);
  }

  protected checkProposalBase(id: string, p: ProposalFacts): void {
    const base = p.baseRevision;
    if (base > this.state.head_revision) return; // Reported with the graph issues.
    const revHash = this.revisionHashes.get(base);
    if (revHash === undefined) {
      // Its base snapshot is what proves the observed value (the reference requires it).
      this.errors.push(`proposal ${id}: base revision ${revisionName(base)}.md is missing.`);
      return;
    }
    if (p.v51 && !p.hasReceipt) {
      this.warnings.push(
        `proposal ${id} has no preflight receipt: it is applied only while its base is still current; once stale, its sync refuses it and its run must stage it again.`,
      );
    }
    if (p.hasReceipt && p.observedHeadHash !== revHash) {
      this.errors.push(
        `proposal ${id}: preflight_receipt does not match revision ${revisionName(base)}.`,
      );
    }
    const storage = p.baseStorage;
    if (storage === "cold") {
      const bound = (this.archiveBy.get(String(p.baseArchiveProposalId)) ?? []).some((r) =>
        r.by === p.baseArchiveProposalId && r.reason === "cooled" &&
        nativeSha256(pyStrip(r.raw)) === p.baseHash
      );
      if (!bound) this.errors.push(`proposal ${id}: its cold base binds no cooled archive row.`);
      return;
    }
    const found = this.keyLine(base, p.key);
    if (found === undefined) return;
    if (storage === "hot" || (storage === undefined && p.baseHash !== "absent" && found)) {
      if (!found || found.hash !== p.baseHash) {
        this.errors.push(
          `proposal ${id}: base_hash does not match ${p.key} at revision ${revisionName(base)}.`,
        );
      }
    } else if (p.baseHash === "absent" && found) {
      this.errors.push(
        `proposal ${id}: ${p.key} was not absent at revision ${revisionName(base)}.`,
      );
    }
  }

  protected checkAcceptedEffect(
    id: string,
    p: ProposalFacts,
    revision: number,
    resolutionId: unknown,
  ): void {
    const found = this.keyLine(revision, p.key);
    if (found === undefined) return;
    const cooledNow = (this.archiveBy.get(id) ?? []).some((r) =>
      r.by === id && r.reason === "cooled" && pyStrip(r.raw).includes(`[K:${p.key}]`)
    );
    const op = p.operation;
    let ok: boolean;
    if (op === "close") {
      // A close archives the generation it removes (formats 10): without that
      // row the closed value is gone from history.
      ok = found === null;
      const archived = (this.archiveBy.get(id) ?? []).some((r) =>
        r.reason === "closed" && pyStrip(r.raw).includes(`[K:${p.key}]`)
      );
      if (ok && !archived) {
        this.errors.push(
          `decision ${id} closed ${p.key}, but no archive row records the closed generation.`,
        );
      }
    } else if (op === "touch") {
      // A touch's effect is its run in the line's L: marker (a revision before
      // the touch holds the key too, so its presence proves nothing).
      ok = (found !== null && found.lastRun === p.run) || cooledNow;
    } else if (p.tier === 3) ok = found !== null && found.tier === 3;
    else {
      ok = (found !== null && found.id === p.entryId) || cooledNow ||
        // An owner's choice of a value another run already made current
        // finalizes without a revision: the live line carries that claim.
        (typeof resolutionId === "string" && found !== null &&
          this.chosenClaimHolds(id, revision, p.key));
    }
    if (!ok) {
      // An owner's choice is judged as the resolution's effect (the reference's wording).
      this.errors.push(
        typeof resolutionId === "string"
          ? `decision ${id} (.bimri/decisions/${id}.json): resolved conflict ${resolutionId} names revision ${
            revisionName(revision)
          }, but that revision does not contain the chosen proposal's effect.`
          : `decision ${id} names revision ${
            revisionName(revision)
          }, which does not contain the proposal's recorded effect.`,
      );
    }
  }

  /** True when `revision` holds `key` with exactly the claim choosing proposal `id` writes. */
  protected chosenClaimHolds(id: string, revision: number, key: string): boolean {
    const bytes = readBytesOrNull(this.paths.revision(revision));
    const text = bytes === null ? null : decodeUtf8Strict(bytes);
    if (text === null) return false;
    const entry = parseView(text, Number.MAX_SAFE_INTEGER).entries
      .find((e) => e.entry.key === key)?.entry ?? null;
    try {
      return candidateSetMatches(readCandidateAt(this.paths, id), entry);
    } catch (error) {
      if (error instanceof BimriError) return false;
      throw error;
    }
  }

  /**
   * A noop says memory already held the proposal's effect at its revision:
   * that revision must show the generation it recorded (a v5.0-era noop,
   * from before cold storage, a hot line for a set and none for a close).
   */
  protected checkNoopEffect(id: string, p: ProposalFacts, d: DecisionFacts): void {
    const found = this.keyLine(d.revision, p.key);
    if (found === undefined) return;
    let ok = true;
    if (d.effectStorage === "hot") ok = found !== null && found.hash === d.effectHash;
    else if (d.effectStorage === "absent") ok = found === null;
    else if (d.effectStorage === undefined && p.operation === "set") ok = found !== null;
    else if (d.effectStorage === undefined && p.operation === "close") ok = found === null;
    if (!ok) {
      this.errors.push(
        `decision ${id} names revision ${
          revisionName(d.revision)
        }, which does not contain the proposal's recorded effect.`,
      );
    }
  }
}
