/**
 * The proof of the resolved answers whose candidates' decisions were not
 * finalized from them yet (consumed.ts explains why such records are proven
 * where they are consumed): only the full checks (authority.ts, status) load it.
 */
import { BimriError } from "../errors.ts";
import type { Store } from "../store/store.ts";
import { readConflict } from "../records/conflict.ts";
import { unprovenAnswerProblem } from "../records/answer_proof.ts";
import type { AuthorityFacts } from "./authority_facts.ts";
import type { AuthorityIssue } from "./everyday.ts";
import { recordRelPath } from "./schemas.ts";

/**
 * Proves every resolved answer whose candidate decisions still wait for
 * finalization (found from the facts: a contested decision whose conflict's
 * resolution is resolved). Reads only those answers.
 */
export function unprovenAnswerIssues(store: Store, facts: AuthorityFacts): AuthorityIssue[] {
  const { decision, resolution } = facts.records;
  const pending = new Set<string>();
  for (const d of decision.values()) {
    if (d.problem || d.stub || d.outcome !== "contested" || !d.conflictId) continue;
    const r = resolution.get(d.conflictId);
    if (r && !r.problem && !r.stub && r.status === "resolved") pending.add(d.conflictId);
  }
  const out: AuthorityIssue[] = [];
  for (const id of [...pending].sort()) {
    let conflict;
    try {
      conflict = readConflict(store, id);
    } catch (error) {
      if (error instanceof BimriError) continue; // A damaged conflict is a graph issue already.
      throw error;
    }
    const problem = conflict ? unprovenAnswerProblem(store, conflict) : null;
    if (problem) {
      out.push({ kind: "resolution", id, path: recordRelPath("resolution", id), problem });
    }
  }
  return out;
}
