/**
 * Layer 2 of the authority check (see authority.ts): the graph checks over
 * collected facts (deletion anchors, candidate hashes, record links, failed
 * answers, revisions history names), every reason canonical writes pause.
 */
import type { State } from "../model/state.ts";
import { conflictId, revisionName } from "../model/ids.ts";
import { AUTHORITY_KINDS, type AuthorityKind } from "./schemas.ts";
import {
  type AuthorityIssue,
  foreignMarkerIssue,
  issue,
  missingDecision,
  missingLoggedProposal,
  type RecordFacts,
} from "./everyday.ts";
import type { AuthorityFacts } from "./authority_facts.ts";

/** The graph checks over collected facts: every reason canonical writes must pause. */
export function authorityIssues(state: State, facts: AuthorityFacts): AuthorityIssue[] {
  const out: AuthorityIssue[] = [];
  const { proposal, decision, conflict, resolution } = facts.records;
  for (const kind of AUTHORITY_KINDS) {
    for (const [id, f] of facts.records[kind]) if (f.problem) out.push(issue(kind, id, f.problem));
  }
  const usable = (f: RecordFacts | undefined) => f !== undefined && !f.problem && !f.stub;
  const marked = new Set<string>();
  // A missing decision of a conflict candidate also names its conflict.
  const candidateOf = new Map<string, string>();
  for (const [id, c] of conflict) {
    if (usable(c)) { for (const candidate of c.proposalIds ?? []) candidateOf.set(candidate, id); }
  }
  // Deletion anchors: run-log proposal markers and the conflict counter.
  for (const [run, log] of facts.logs) {
    const active = state.active_runs[run];
    for (const id of log.markers) {
      if (!id.startsWith(`${run}-Q`)) {
        out.push(foreignMarkerIssue(run, id));
        continue;
      }
      marked.add(id);
      const p = proposal.get(id);
      if (!p) {
        out.push(
          missingLoggedProposal(id, run),
        );
        continue;
      }
      const decided = log.closed ||
        (active !== undefined && usable(p) && active.base_revision > (p.baseRevision ?? 0));
      if (decided && !decision.has(id)) {
        out.push(missingDecision(id, "its run synced or closed", candidateOf.get(id)));
      }
    }
  }
  // A proposal file without its marker is a propose cut short before the log
  // line: harmless while its run is open, since the run's next sync or close
  // decides every proposal file it has. Once the run has synced past it or
  // closed, its decision must exist like any other.
  for (const [id, p] of proposal) {
    if (marked.has(id) || !usable(p)) continue;
    const run = id.slice(0, 7);
    const active = state.active_runs[run];
    const decided = facts.logs.get(run)?.closed === true ||
      (active !== undefined && active.base_revision > (p.baseRevision ?? 0));
    if (decided && !decision.has(id)) {
      out.push(
        missingDecision(
          id,
          "its run synced or closed after this proposal, which its log does not name",
          candidateOf.get(id),
        ),
      );
    }
  }
  for (let n = 1; n <= state.conflict_count; n++) {
    const id = conflictId(n);
    if (!conflict.has(id)) {
      out.push(
        issue("conflict", id, `is missing although conflict_count is ${state.conflict_count}`),
      );
    }
  }
  for (const [id, d] of decision) {
    if (!usable(d)) continue;
    if (!proposal.has(id)) out.push(issue("decision", id, "has no proposal record"));
    if (d.conflictId) {
      const c = conflict.get(d.conflictId);
      if (!c) out.push(issue("decision", id, `names conflict ${d.conflictId}, which is missing`));
      else if (usable(c) && !(c.proposalIds ?? []).includes(id)) {
        out.push(issue("decision", id, `is not a candidate of conflict ${d.conflictId}`));
      }
    }
    if (d.resolutionId && !resolution.has(d.resolutionId)) {
      out.push(
        issue(
          "decision",
          id,
          `was decided by resolution ${d.resolutionId}, whose record is missing`,
        ),
      );
    }
  }
  for (const [id, c] of conflict) {
    if (!usable(c)) continue;
    for (const candidate of c.proposalIds ?? []) {
      const p = proposal.get(candidate);
      if (!p) out.push(issue("conflict", id, `candidate ${candidate} is missing`));
      else if (usable(p) && p.sha !== c.proposalHashes?.[candidate]) {
        out.push(
          issue("conflict", id, `candidate ${candidate} no longer matches its recorded hash`),
        );
      }
    }
  }
  for (const [id, r] of resolution) {
    if (!usable(r)) continue;
    const c = conflict.get(id);
    if (!c) out.push(issue("resolution", id, "answers a conflict that is missing"));
    else if (usable(c) && (c.proposalIds ?? []).join(",") !== (r.proposalIds ?? []).join(",")) {
      out.push(issue("resolution", id, "candidate list differs from its conflict"));
    }
    if (r.status === "failed") {
      out.push(issue("resolution", id, "resolution status is failed; explicit retry is required."));
    }
    // An answer cannot predate what it answers: every candidate was staged on its base.
    const bases = (c && usable(c) ? c.proposalIds ?? [] : [])
      .map((candidate) => proposal.get(candidate))
      .filter((p): p is RecordFacts => p !== undefined && usable(p))
      .map((p) => p.baseRevision ?? 0);
    const highestBase = Math.max(-1, ...bases);
    for (
      const [field, value] of [["revision_before", r.revisionBefore], [
        "revision_after",
        r.status === "resolved" ? r.revisionAfter : null,
      ]] as const
    ) {
      if (typeof value === "number" && value < highestBase) {
        out.push(
          issue(
            "resolution",
            id,
            field === "revision_before"
              // The reference's words: the conflict's snapshot of the live
              // value cannot be in a revision older than a candidate's base.
              ? "conflict hot snapshot is not present in its recorded revision: resolution revision_before precedes a candidate proposal's base revision"
              : `resolution ${field} precedes a candidate proposal's base revision`,
          ),
        );
      }
    }
  }
  for (const run of facts.unsafeLogs ?? []) {
    out.push({
      kind: "run log",
      id: run,
      path: `.bimri/log/${run}.md`,
      problem: "run log cannot be a symbolic link or anything but a regular file",
    });
  }
  out.push(...revisionBindingIssues(state, facts));
  return out;
}

/** A revision a usable record names, and how the two checks below read it. */
type RevisionBinding = {
  kind: AuthorityKind;
  id: string;
  revision: number | null | undefined;
  /** The field, as the beyond-the-head issue names it. */
  field: string;
  /** Only an accepted decision's revision must still exist (a proposal's base and an answer's always). */
  mustExist: boolean;
};

/** The revisions history names: proposal bases, decided decisions, resolved answers. */
function revisionBindings(facts: AuthorityFacts): RevisionBinding[] {
  const usable = (f: RecordFacts) => !f.problem && !f.stub;
  const out: RevisionBinding[] = [];
  for (const [id, p] of facts.records.proposal) {
    if (usable(p)) {
      out.push({
        kind: "proposal",
        id,
        revision: p.baseRevision,
        field: "base revision",
        mustExist: true,
      });
    }
  }
  // An applying decision names no revision yet.
  for (const [id, d] of facts.records.decision) {
    if (usable(d) && d.outcome !== "applying") {
      out.push({
        kind: "decision",
        id,
        revision: d.revision,
        field: "revision",
        mustExist: d.outcome === "accepted",
      });
    }
  }
  for (const [id, r] of facts.records.resolution) {
    if (usable(r) && r.status === "resolved") {
      out.push({
        kind: "resolution",
        id,
        revision: r.revisionAfter,
        field: "revision_after",
        mustExist: true,
      });
    }
  }
  return out;
}

/**
 * History that names a revision the head has not reached (a forged or
 * misplaced record), then, where the check lists the revision files, one
 * whose file is gone (the genesis snapshot included; the head itself is
 * checked when it is loaded). The reference pauses writes on both.
 */
function revisionBindingIssues(state: State, facts: AuthorityFacts): AuthorityIssue[] {
  const head = state.head_revision;
  const present = facts.revisions;
  const beyond: AuthorityIssue[] = [];
  const missing: AuthorityIssue[] = [];
  if (present && head > 0 && !present.has(0)) {
    // Every history starts from the genesis snapshot (a link to it counts as missing).
    missing.push({
      kind: "revision",
      id: "V000000",
      path: ".bimri/revisions/V000000.md",
      problem: "missing or unsafe revision V000000",
    });
  }
  for (const b of revisionBindings(facts)) {
    const n = b.revision;
    if (typeof n !== "number") continue;
    if (n > head) {
      beyond.push(issue(b.kind, b.id, `${b.field} ${n} is beyond the current canonical head`));
    } else if (present && b.mustExist && n >= 0 && n < head && !present.has(n)) {
      missing.push(
        issue(
          b.kind,
          b.id,
          b.kind === "proposal"
            ? `its base revision ${revisionName(n)} is missing`
            : `names revision ${revisionName(n)}, which is missing`,
        ),
      );
    }
  }
  return [...beyond, ...missing];
}
