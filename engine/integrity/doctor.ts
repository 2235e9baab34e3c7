/**
 * `doctor`: the full integrity audit of protocol section 12. It never writes:
 * the command decides whether to heal the view and rebuild the index around
 * it. Checks, in order: layout and unsafe nodes, strict state, every revision's
 * grammar, the head and its hash, hot/cold overlap and bounds, pointer
 * containment, cold-current archive bindings, archive grammar, run logs,
 * every authority record (schema, version-aware) and the authority graph
 * (deletion anchors, candidate hashes, links), decision and resolution
 * revision effects, proposal base-snapshot bindings, quarantine evidence,
 * restore receipts, manual-edit evidence, and the index shape. This file is
 * the audit's entry points and that ordered sequence; the checks themselves
 * are doctor_files.ts and doctor_authority.ts, on the state of doctor_state.ts.
 */
import { BimriError } from "../errors.ts";
import { rejectUnclaimedLegacyRoots } from "../records/store_format.ts";
import { claimOfState, lineageProblem, type RecordProver } from "../records/legacy_claim.ts";
import { lstatOrNull } from "../store/files.ts";
import type { StorePaths } from "../store/paths.ts";
import { loadState } from "../store/store.ts";
import { StateFormatError } from "../model/state.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";
import { collectGarbage, enableFullCollections } from "./heap.ts";
import { RevisionParser } from "./revision_pass.ts";
import type { DoctorReport, ShadowRecord } from "./doctor_state.ts";
import { AuthorityAudit } from "./doctor_authority.ts";

/** Revisions from which an audit collects garbage between its passes (see heap.ts). */
const LARGE_STORE_REVISIONS = 1000;

/**
 * Readies the audit of the store at `paths` for its size: a store of at least
 * LARGE_STORE_REVISIONS revisions gets full collections between the passes.
 * Counting stops at that number, so this costs under a millisecond.
 */
export async function prepareAudit(paths: StorePaths): Promise<void> {
  let count = 0;
  try {
    for (const _ of Deno.readDirSync(paths.folder("revisions"))) {
      if (++count >= LARGE_STORE_REVISIONS) break;
    }
  } catch {
    // The audit reports a missing or unreadable folder itself.
  }
  if (count >= LARGE_STORE_REVISIONS) await enableFullCollections();
}

/**
 * Audits the store at `paths` without writing anything. A v1-v3 migration
 * record is proven only with `proveLegacyRecord` (doctor loads it for a store
 * that has one); without it the audit checks that state and record claim each other.
 */
export function auditStore(
  paths: StorePaths,
  shadow?: ShadowRecord,
  proveLegacyRecord: RecordProver | null = null,
): DoctorReport {
  // What the caller read before (quarantine and restore read every record) is garbage by now.
  collectGarbage();
  const audit = new Audit(paths, shadow ?? null, proveLegacyRecord);
  audit.run();
  return { passed: audit.errors.length === 0, errors: audit.errors, warnings: audit.warnings };
}

/** One audit: every check, in the order the reference reports them. */
class Audit extends AuthorityAudit {
  run(): void {
    const dirInfo = lstatOrNull(this.paths.dir);
    if (!dirInfo || !dirInfo.isDirectory || dirInfo.isSymlink) {
      this.errors.push("existing .bimri directory is missing or unsafe.");
      return;
    }
    this.checkLayout();
    try {
      // Older memory beside the store: the owner must say which is authoritative.
      rejectUnclaimedLegacyRoots(this.paths.root);
    } catch (error) {
      if (!(error instanceof BimriError)) throw error;
      this.errors.push(error.message);
    }
    try {
      this.state = loadState(this.paths, { audit: true });
    } catch (error) {
      if (error instanceof StateFormatError) {
        // The reference's words, which scripts look for; then the next step.
        const found = typeof error.found === "string" ? error.found : JSON.stringify(error.found);
        this.errors.push(
          `read-only audit requires memory format v${AUTHORITY_FORMAT}; found ${found}. ${StateFormatError.nextStep}`,
        );
        return;
      }
      if (error instanceof BimriError) {
        this.errors.push(error.message);
        return;
      }
      throw error;
    }
    const lineage = lineageProblem(this.paths, claimOfState(this.state), this.proveLegacyRecord);
    if (lineage !== null) this.errors.push(lineage);
    this.parser = new RevisionParser(this.state.entry_max_chars);
    this.prepareAuthority();
    // Each of these passes leaves tens of MB of garbage on a large store (see heap.ts).
    collectGarbage();
    this.readRevisions();
    this.listings.clear();
    collectGarbage();
    this.checkHead();
    this.readArchive();
    collectGarbage();
    this.checkCold();
    this.checkLogs();
    this.checkAuthority();
    this.checkConflictResidency();
    this.checkRecovery();
    this.checkIndex();
    this.reportTemporaryFiles();
  }
}
