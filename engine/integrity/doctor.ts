/**
 * `doctor`: the full integrity audit of protocol section 12. It never writes:
 * the command decides whether to heal the view and rebuild the index around
 * it. Checks, in order: layout and unsafe nodes, strict state, every revision's
 * grammar, the head and its hash, hot/cold overlap and bounds, pointer
 * containment, cold-current archive bindings, archive grammar, run logs,
 * every authority record (schema, version-aware) and the authority graph
 * (deletion anchors, candidate hashes, links), decision and resolution
 * revision effects, proposal base-snapshot bindings, quarantine evidence,
 * restore receipts, manual-edit evidence, and the index shape.
 */
import { isV4ArchiveRow } from "../model/archive_row.ts";
import { isAbsolute, normalize } from "node:path";
import { BimriError } from "../errors.ts";
import { rejectUnclaimedLegacyRoots } from "../migrate/detect.ts";
import { claimOfState, lineageProblem, type RecordProver } from "../migrate/legacy_claim.ts";
import { type MemoryEntry, parseAnyEntry, parseEntryForTier, parseView } from "../model/hot.ts";
import { candidateSetMatches, readCandidateAt } from "../records/conflict.ts";
import { decodeUtf8Strict, lineHash, pyStrip, sha256Hex } from "../model/text.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../model/json.ts";
import { listNames, lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { STORE_FOLDERS, type StorePaths } from "../store/paths.ts";
import { loadState } from "../store/store.ts";
import { coldRecordOf, type State, StateFormatError } from "../model/state.ts";
import { revisionName } from "../model/ids.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";
import {
  authorityIssues,
  collectFacts,
  type CollectOptions,
  factsFromBytes,
  type FolderEntry,
  hashCandidates,
  issueLine,
} from "./authority.ts";
import { BulkReader, decodeUtf8Fast, isUtf8Bytes, nativeSha256 } from "./bulk_read.ts";
import { collectGarbage, enableFullCollections } from "./heap.ts";
import { RevisionParser, type RevisionView } from "./revision_pass.ts";
import { type AuthorityKind, HOLD_REASONS, isStub, isV51, receiptProblems } from "./schemas.ts";

/** How the audit labels a damaged authority record (the reference's doctor prefix). */
export const AUTHORITY_RECOVERY_NEEDED = "authority recovery needed: ";

/**
 * A record audited as if `bytes` stood at its path: restore's isolated shadow,
 * so a replacement is fully validated before anything is written.
 */
export type ShadowRecord = { kind: AuthorityKind; id: string; bytes: Uint8Array };

/** The audit's findings. */
export type DoctorReport = {
  passed: boolean;
  errors: string[];
  warnings: string[];
};

/** Folders that may contain only regular files. */
const FLAT_FOLDERS = [
  "proposals",
  "decisions",
  "conflicts",
  "resolutions",
  "revisions",
  "archive",
  "recovery",
];

const ARCHIVE_ROW =
  /^\[ARCHIVED:([0-9]{4}-[0-9]{2}-[0-9]{2})\] \[BY:(R[0-9]{6}-Q[0-9]{3})\] \[(replaced|closed|cooled)\] (.+)$/;

type ArchiveRow = { date: string; by: string; reason: string; raw: string };

type LoadedRevision = { bytes: Uint8Array; view: RevisionView | null };

/** What a key looked like at one revision: its line and entry, or null when absent. */
/** A folder listing kept compactly: sorted names and type bits (1 file, 2 link, 4 folder). */
type Listing = { names: string[]; kinds: Uint8Array };

/** What the audit keeps of a key's line at a revision; `lastRun` is a Tier 2 line's `L:` run. */
type KeyLine = { hash: string; tier: number; id: string; lastRun: string | null } | null;

function keyLineOf(raw: string, entry: MemoryEntry): KeyLine {
  // Only the line's hash is kept (thousands of answers; the text is not needed).
  return {
    hash: nativeSha256(pyStrip(raw)),
    tier: entry.tier,
    id: entry.id,
    lastRun: entry.tier === 2 ? entry.last_run : null,
  };
}

/** The fields of a proposal the audit's effect checks use (records are not kept whole). */
type ProposalFacts = {
  key: string;
  run: unknown;
  baseRevision: number;
  baseHash: unknown;
  baseStorage: string | undefined;
  baseArchiveProposalId: unknown;
  observedHeadHash: unknown;
  hasReceipt: boolean;
  operation: unknown;
  tier: unknown;
  entryId: unknown;
  holdReason: unknown;
  v51: boolean;
};

/** The fields of a decision the audit uses. */
type DecisionFacts = {
  outcome: unknown;
  revision: number;
  reason: unknown;
  resolutionId: unknown;
  conflictId: unknown;
  /** A noop's evidence: where the matching generation was, and its line hash. */
  effectStorage: unknown;
  effectHash: unknown;
};

/** A noop the commit itself decided (an owner's dismissal is checked with its answer). */
function isOwnNoop(d: DecisionFacts): boolean {
  return d.outcome === "noop" && typeof d.resolutionId !== "string" &&
    typeof d.revision === "number";
}

/**
 * The conflicts whose live snapshot the reference proves in the residency
 * they recorded (v5.1 records other than manual-edit reviews).
 */
function bindsResidency(c: JsonObject): boolean {
  return c.bimri_version === AUTHORITY_FORMAT && c.type !== "manual-edit" &&
    typeof c.key === "string";
}

function decisionFacts(d: JsonObject): DecisionFacts {
  return {
    outcome: d.outcome,
    revision: d.revision as number,
    reason: d.reason,
    resolutionId: d.resolution_id,
    conflictId: d.conflict_id,
    // Kept for noops only: the audit holds every decision's facts at once.
    effectStorage: d.outcome === "noop" ? d.effect_storage : undefined,
    effectHash: d.outcome === "noop" ? d.effect_hash : undefined,
  };
}

function proposalFacts(p: JsonObject): ProposalFacts {
  const receipt = p.preflight_receipt;
  return {
    key: p.key as string,
    run: p.run_id,
    baseRevision: p.base_revision as number,
    baseHash: p.base_hash,
    baseStorage: p.base_storage as string | undefined,
    baseArchiveProposalId: p.base_archive_proposal_id,
    observedHeadHash: isJsonObject(receipt) ? receipt.observed_head_hash : undefined,
    hasReceipt: isJsonObject(receipt),
    operation: p.operation,
    tier: p.tier,
    entryId: p.entry_id,
    holdReason: p.hold_reason,
    v51: isV51(p),
  };
}

function isTemporary(name: string): boolean {
  return name.startsWith(".bimri-tmp-") || name.startsWith(".bimri-new-");
}

function readJsonObject(path: string): JsonObject | null {
  const bytes = readBytesOrNull(path);
  if (bytes === null) return null;
  const text = decodeUtf8Strict(bytes);
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as JsonValue;
    return isJsonObject(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * True when every non-empty line of index.tsv has exactly eight tab-separated
 * columns. Counted on the bytes (LF and TAB never occur inside a multi-byte
 * UTF-8 sequence): the index has tens of thousands of rows.
 */
function everyRowHasEightColumns(bytes: Uint8Array): boolean {
  const LF = 10;
  const TAB = 9;
  for (let start = 0; start < bytes.length;) {
    let end = bytes.indexOf(LF, start);
    if (end < 0) end = bytes.length;
    if (end > start) {
      let tabs = 0;
      for (let i = bytes.indexOf(TAB, start); i >= 0 && i < end; i = bytes.indexOf(TAB, i + 1)) {
        if (++tabs > 7) return false;
      }
      if (tabs !== 7) return false;
    }
    start = end + 1;
  }
  return true;
}

/** True when a line's pointer stays inside the project root. */
function pointerContained(pointer: string | null): boolean {
  if (pointer === null) return true;
  if (isAbsolute(pointer) || /^[A-Za-z]:/.test(pointer) || pointer.includes("\\")) return false;
  const normalized = normalize(pointer);
  return normalized !== ".." && !normalized.startsWith("../");
}

function entryPointer(entry: MemoryEntry): string | null {
  return entry.tier === 3 ? null : entry.pointer;
}

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

class Audit {
  readonly errors: string[] = [];
  readonly warnings: string[] = [];
  private state!: State;
  /** SHA-256 of every revision file (numbers present on disk). */
  private revisionHashes = new Map<number, string>();
  private head: LoadedRevision | null = null;
  /** One listing per folder per audit (entry types come without lstat). */
  private listings = new Map<string, Listing>();
  /** Parses each revision from the one before it where it can (see revision_pass.ts). */
  private parser!: RevisionParser;
  /** Key lookups the effect checks need, by revision, answered while revisions stream by. */
  private queries = new Map<number, string[]>();
  private answers = new Map<number, Map<string, KeyLine>>();
  /** Authority read once, before the revisions (see prepareAuthority). */
  /** Graph findings, computed while the facts are at hand and reported in checkAuthority. */
  private graphIssues: string[] = [];
  /** Where conflicts' snapshots must hold in their recorded residency (see residencyClaims). */
  private claims: [number, string, string][] = [];
  private proposals = new Map<string, ProposalFacts>();
  private decisions = new Map<string, DecisionFacts>();
  private conflicts = new Map<string, JsonObject>();
  private resolutions = new Map<string, JsonObject>();
  private stubEvidence: { kind: AuthorityKind; id: string; file: string }[] = [];
  /** Archive rows by the proposal that wrote them. */
  private archiveBy = new Map<string, ArchiveRow[]>();
  /** One reused buffer for every file the audit reads (see bulk_read.ts). */
  private reader = new BulkReader();
  /** Leftover temporary files, relative to the root (see collectTemporaryFiles). */
  private temporaryFiles: string[] = [];

  constructor(
    private readonly paths: StorePaths,
    private readonly shadow: ShadowRecord | null,
    private readonly proveLegacyRecord: RecordProver | null,
  ) {}

  private isShadowed(kind: AuthorityKind, id: string): boolean {
    return this.shadow !== null && this.shadow.kind === kind && this.shadow.id === id;
  }

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

  private checkLayout(): void {
    for (const folder of STORE_FOLDERS) {
      const info = lstatOrNull(this.paths.folder(folder));
      // The reference's audit-manifests cache folder may be absent (v5.0.x stores).
      if (!info && folder === "audit-manifests") continue;
      if (info?.isSymlink) {
        // The reference's words: a redirected folder would let writes escape the store.
        this.errors.push(`.bimri/${folder} cannot be a symbolic link.`);
      } else if (!info || !info.isDirectory) {
        this.errors.push(`.bimri/${folder} is missing or unsafe.`);
      }
    }
    for (
      const [path, label] of [
        [this.paths.view, "bimri.md"],
        [this.paths.state, ".bimri/state.json"],
        [this.paths.index, ".bimri/index.tsv"],
        [this.paths.lock, ".bimri/engine.lock"],
      ]
    ) {
      const info = lstatOrNull(path);
      if (info && (info.isSymlink || !info.isFile)) {
        this.errors.push(`${label} is a symbolic link or not a regular file.`);
      } else if (!info && path === this.paths.lock) {
        // A warning, not an error: a store checked out of version control has
        // none (it is machine-local), and the first writing command creates it.
        this.warnings.push(
          ".bimri/engine.lock is missing; the next writing command (or doctor without --read-only) creates it.",
        );
      }
    }
    for (const folder of FLAT_FOLDERS) {
      for (const info of this.entries(folder)) {
        const name = info.name;
        if (info.isSymlink || !info.isFile) {
          // Authority folders are reported with their record by the authority checks.
          if (
            !["proposals", "decisions", "conflicts", "resolutions"].includes(folder) ||
            !/^(R[0-9]{6}-Q[0-9]{3}|C[0-9]{6})\.json$/.test(name)
          ) {
            this.errors.push(
              `.bimri/${folder}/${name} is not a regular file (symbolic link or folder).`,
            );
          }
        } else if (isTemporary(name)) {
          // Reported with every other leftover by reportTemporaryFiles.
        } else if (
          ["proposals", "decisions", "conflicts", "resolutions"].includes(folder) &&
          !/^(R[0-9]{6}-Q[0-9]{3}|C[0-9]{6})\.json$/.test(name)
        ) {
          // The reference's wording for a JSON file no record ID names.
          this.warnings.push(
            name.endsWith(".json")
              ? `ignored non-authority JSON filename in ${folder.slice(0, -1)} directory: ${name}.`
              : `unexpected file .bimri/${folder}/${name}.`,
          );
        }
      }
    }
    for (const info of this.entries("log")) {
      if (info.isSymlink || !info.isFile) {
        this.errors.push(`.bimri/log/${info.name} is not a regular file.`);
      }
    }
    this.collectTemporaryFiles();
  }

  /**
   * Notes the leftovers of interrupted writes (`.bimri-tmp-*` of an atomic
   * replace, `.bimri-new-*` of an exclusive create) wherever a write can leave
   * one: the project root (bimri.md), `.bimri/` (state.json, index.tsv) and
   * every store folder, as the reference looks. Any entry type counts. They
   * are collected here, while the folder listings are at hand, and reported
   * last (reportTemporaryFiles).
   */
  private collectTemporaryFiles(): void {
    for (const [path, prefix] of [[this.paths.root, ""], [this.paths.dir, ".bimri/"]]) {
      try {
        for (const entry of Deno.readDirSync(path)) {
          if (isTemporary(entry.name)) this.temporaryFiles.push(prefix + entry.name);
        }
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    }
    for (const folder of STORE_FOLDERS) {
      for (const info of this.entries(folder)) {
        if (isTemporary(info.name)) this.temporaryFiles.push(`.bimri/${folder}/${info.name}`);
      }
    }
  }

  /** Warns about each leftover temporary file, in path order (they never fail the audit). */
  private reportTemporaryFiles(): void {
    const parts = (path: string) => path.split("/");
    const byParts = (a: string, b: string): number => {
      const [x, y] = [parts(a), parts(b)];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
      }
      return x.length - y.length;
    };
    for (const path of this.temporaryFiles.sort(byParts)) {
      this.warnings.push(`abandoned temporary file ${path}.`);
    }
  }

  /**
   * The entries of a store folder (types from the listing, never followed),
   * sorted by name, listed once per audit and kept compactly (names plus type
   * bits: tens of thousands of entries; the entry objects are short-lived).
   */
  private *entries(folder: string): Generator<FolderEntry & { isDirectory: boolean }> {
    let list = this.listings.get(folder);
    if (!list) {
      const names: string[] = [];
      const kindOf = new Map<string, number>();
      try {
        for (const e of Deno.readDirSync(this.paths.folder(folder))) {
          names.push(e.name);
          kindOf.set(e.name, (e.isFile ? 1 : 0) | (e.isSymlink ? 2 : 0) | (e.isDirectory ? 4 : 0));
        }
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
      // The default sort compares UTF-16 code units, as `<` does (names are unique).
      names.sort();
      list = { names, kinds: Uint8Array.from(names, (name) => kindOf.get(name)!) };
      this.listings.set(folder, list);
    }
    const { names, kinds } = list;
    for (let i = 0; i < names.length; i++) {
      const kind = kinds[i];
      yield {
        name: names[i],
        isFile: (kind & 1) !== 0,
        isSymlink: (kind & 2) !== 0,
        isDirectory: (kind & 4) !== 0,
      };
    }
  }

  private readRevisions(): void {
    // Streamed: each revision is read, hashed and parsed once, answers the key
    // lookups queued for it by prepareAuthority, and is dropped (only the head is kept).
    const folder = this.paths.folder("revisions");
    for (const info of this.entries("revisions")) {
      const name = info.name;
      const match = /^V([0-9]{6})\.md$/.exec(name);
      if (!match) {
        if (!isTemporary(name)) this.warnings.push(`unexpected file .bimri/revisions/${name}.`);
        continue;
      }
      if (!info.isFile || info.isSymlink) continue;
      const n = Number(match[1]);
      // A view into the reused buffer: hashed and parsed at once (the head is copied).
      const bytes = this.reader.read(`${folder}/${name}`);
      if (bytes === null) continue;
      const view = this.parser.parse(bytes);
      if (view === null) this.errors.push(`revision ${name} is not valid UTF-8.`);
      else {
        for (const problem of view.errors) {
          this.errors.push(`revision ${revisionName(n)}: ${problem}.`);
        }
      }
      this.revisionHashes.set(n, nativeSha256(bytes));
      const wanted = this.queries.get(n);
      if (wanted && view) {
        const found = new Map<string, KeyLine>();
        for (const key of wanted) found.set(key, null);
        for (const e of view.entries) {
          if (wanted.includes(e.entry.key)) {
            found.set(e.entry.key, keyLineOf(e.raw, e.entry));
          }
        }
        this.answers.set(n, found);
      }
      if (n === this.state.head_revision) {
        // The parser reuses its buffers and lists: the head keeps copies.
        const kept = view && { entries: [...view.entries], errors: view.errors };
        this.head = { bytes: bytes.slice(), view: kept };
      }
    }
  }

  private checkHead(): void {
    const head = this.head;
    const headName = revisionName(this.state.head_revision);
    if (!head) {
      this.errors.push(`accepted head revision is missing (${headName}).`);
      return;
    }
    if (this.revisionHashes.get(this.state.head_revision) !== this.state.head_hash) {
      this.errors.push("accepted head revision does not match state.head_hash.");
    }
    // Inherited overflow stays readable; the owner is told a repair is due (the reference's words).
    const repair = "bounded-memory repair needed: ";
    if (head.bytes.length > this.state.hot_max_bytes) {
      this.warnings.push(
        `${repair}hot memory exceeds byte cap: ${head.bytes.length}/${this.state.hot_max_bytes}`,
      );
    }
    if (head.view) {
      const ids = new Set<string>();
      for (const { entry } of head.view.entries) {
        ids.add(entry.id);
        const legacy = entry.tier !== 3 && entry.source === "legacy";
        if (legacy || entry.tier === 3) {
          // Python's len: code points, not UTF-16 units.
          const length = [...entry.text].length;
          if (length > this.state.entry_max_chars) {
            this.warnings.push(
              `${repair}${entry.id} inherited ${
                legacy ? "legacy" : "v4 pattern"
              } text exceeds active entry cap: ${length}/${this.state.entry_max_chars} characters`,
            );
          }
        }
        if (coldRecordOf(this.state, entry.key)) {
          this.errors.push(`key ${entry.key} is current both hot and cold-current.`);
        }
        if (!pointerContained(entryPointer(entry))) {
          this.errors.push(`entry ${entry.id}: pointer escapes the BIMRI project.`);
        }
      }
      for (const cold of Object.values(this.state.cold_current)) {
        if (ids.has(cold.entry_id)) {
          this.errors.push(`entry ID ${cold.entry_id} is current both hot and cold-current.`);
        }
        ids.add(cold.entry_id);
      }
    }
    const viewBytes = this.reader.read(this.paths.view);
    if (viewBytes === null) {
      // An error, as the reference reports it: the view agents read is gone.
      this.errors.push(
        "bimri.md is missing; run doctor without --read-only (or any command) to regenerate it from the head.",
      );
    } else if (nativeSha256(viewBytes) !== nativeSha256(head.bytes)) {
      this.errors.push(
        "generated bimri.md differs from the accepted head; recovery is needed and read-only doctor left the file unchanged.",
      );
    }
  }

  private readArchive(): void {
    const folder = this.paths.folder("archive");
    for (const name of listNames(folder)) {
      if (!/^[0-9]{4}-[0-9]{2}\.md$/.test(name)) {
        if (!isTemporary(name)) this.warnings.push(`unexpected file .bimri/archive/${name}.`);
        continue;
      }
      const bytes = this.reader.read(`${folder}/${name}`);
      const text = bytes === null ? null : decodeUtf8Fast(bytes);
      if (text === null) {
        this.errors.push(`archive .bimri/archive/${name} is not valid UTF-8.`);
        continue;
      }
      text.split("\n").forEach((line, index) => {
        if (!line.startsWith("[ARCHIVED:") || isV4ArchiveRow(line)) return;
        const match = ARCHIVE_ROW.exec(line.replace(/\r$/, ""));
        if (!match || !parseAnyEntry(match[4]) || !name.startsWith(match[1].slice(0, 7))) {
          this.errors.push(`archive .bimri/archive/${name} line ${index + 1} is malformed.`);
          return;
        }
        const row = { date: match[1], by: match[2], reason: match[3], raw: match[4] };
        const list = this.archiveBy.get(row.by) ?? [];
        list.push(row);
        this.archiveBy.set(row.by, list);
      });
    }
  }

  private checkCold(): void {
    for (const [key, cold] of Object.entries(this.state.cold_current)) {
      const entry = parseEntryForTier(cold.raw_line, 2);
      if (!entry || entry.key !== key || entry.id !== cold.entry_id) {
        this.errors.push(
          `cold_current.${key} raw_line is not a Tier 2 line of that key and entry.`,
        );
        continue;
      }
      if (lineHash(cold.raw_line) !== cold.line_hash) {
        this.errors.push(`cold_current.${key} line_hash does not match raw_line.`);
      }
      if (!pointerContained(entry.tier === 3 ? null : entry.pointer)) {
        this.errors.push(`cold_current.${key}: pointer escapes the BIMRI project.`);
      }
      const bound = (this.archiveBy.get(cold.archived_by) ?? []).filter((r) =>
        r.date === cold.archived_on && r.by === cold.archived_by && r.reason === "cooled" &&
        r.raw === cold.raw_line
      );
      if (bound.length !== 1) {
        this.errors.push(
          `cold_current.${key} is not bound to exactly one immutable cooled archive row (found ${bound.length}).`,
        );
      }
    }
  }

  private checkLogs(): void {
    for (const run of Object.keys(this.state.active_runs)) {
      const bytes = readBytesOrNull(this.paths.log(run));
      if (bytes === null) {
        this.errors.push(`active run ${run} has no log.`);
        continue;
      }
      const text = decodeUtf8Strict(bytes);
      if (text === null || !text.startsWith(`# Run ${run} |`)) {
        this.errors.push(`log of active run ${run} does not start with its header.`);
      }
    }
  }

  /** Queues a key lookup at `revision` for the revision pass. */
  private ask(revision: number, key: string): void {
    if (typeof revision !== "number" || typeof key !== "string") return;
    // An array, not a set: a revision is asked for one to three keys.
    const keys = this.queries.get(revision);
    if (!keys) this.queries.set(revision, [key]);
    else if (!keys.includes(key)) keys.push(key);
  }

  /** The key's line at `revision`; undefined when that revision is missing or unreadable. */
  private keyLine(revision: number, key: string): KeyLine | undefined {
    if (revision === this.state.head_revision && this.head) {
      if (!this.head.view) return undefined;
      const found = this.head.view.entries.find((e) => e.entry.key === key);
      return found ? keyLineOf(found.raw, found.entry) : null;
    }
    return this.answers.get(revision)?.get(key);
  }

  /**
   * Reads every authority record once, before the revisions: keeps the few
   * fields the effect checks need and queues their key lookups. Findings are
   * reported later, in checkAuthority, in the audit's usual order.
   */
  private prepareAuthority(): void {
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
  private residencyClaims(): [number, string, string][] {
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
  private checkConflictResidency(): void {
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

  private checkAuthority(): void {
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
  private answerHolds(conflictId: string, choice: string, after: number): boolean {
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

  private checkProposalBase(id: string, p: ProposalFacts): void {
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

  private checkAcceptedEffect(
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
  private chosenClaimHolds(id: string, revision: number, key: string): boolean {
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
  private checkNoopEffect(id: string, p: ProposalFacts, d: DecisionFacts): void {
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

  private checkEvidenceFile(relative: string, owner: string): void {
    const match = /^\.bimri\/recovery\/([A-Za-z0-9._-]+)$/.exec(relative);
    if (!match) {
      this.errors.push(`${owner} names recovery evidence outside .bimri/recovery: ${relative}.`);
      return;
    }
    const path = this.paths.folder("recovery") + "/" + match[1];
    const info = lstatOrNull(path);
    const bytes = info?.isFile && !info.isSymlink ? readBytesOrNull(path) : null;
    // A restore receipt's evidence is worded as the reference words it.
    const receipt = owner.startsWith("restore receipt ");
    if (bytes === null) {
      this.errors.push(
        receipt
          ? `${owner}: recovery evidence is damaged: authority restore receipt recovery copy is missing (${relative}).`
          : `${owner} names missing recovery evidence ${relative}.`,
      );
      return;
    }
    const hash = /-([0-9a-f]{64})\.(md|bin|json)$/.exec(match[1]);
    if (hash && sha256Hex(bytes) !== hash[1]) {
      this.errors.push(
        receipt
          ? `${owner}: recovery evidence is damaged: authority restore receipt recovery hash does not match (${relative}).`
          : `recovery evidence ${relative} was altered (its hash no longer matches its name).`,
      );
    }
  }

  private checkRecovery(): void {
    const folder = this.paths.folder("recovery");
    for (const name of listNames(folder)) {
      const info = lstatOrNull(`${folder}/${name}`);
      if (!info?.isFile || info.isSymlink || isTemporary(name)) continue;
      const relative = `.bimri/recovery/${name}`;
      const manual = /^manual-hot-([0-9a-f]{64})\.(md|bin)$/.exec(name);
      const evidence =
        /^authority-(proposal|decision|conflict|resolution)-([A-Z0-9-]+)-([0-9a-f]{64})\.json$/
          .exec(name);
      const receipt =
        /^authority-restore-(proposal|decision|conflict|resolution)-([A-Z0-9-]+)-([0-9a-f]{64})-([0-9a-f]{64})\.json$/
          .exec(name);
      const bytes = readBytesOrNull(`${folder}/${name}`) ?? new Uint8Array();
      if (receipt) {
        const value = readJsonObject(`${folder}/${name}`);
        const [, kind, id, original, replacement] = receipt;
        if (!value) {
          this.errors.push(`restore receipt ${relative} is not valid JSON.`);
          continue;
        }
        const problems = receiptProblems(value, kind as AuthorityKind, id, original, replacement);
        if (problems.length > 0) {
          this.errors.push(`restore receipt ${relative} is invalid: ${problems.join("; ")}.`);
        }
        this.checkEvidenceFile(
          `.bimri/recovery/authority-${kind}-${id}-${original}.json`,
          `restore receipt ${relative}`,
        );
      } else if (manual) {
        if (sha256Hex(bytes) !== manual[1]) {
          this.errors.push(
            `recovery evidence ${relative} was altered (its hash no longer matches its name).`,
          );
        }
        if ((decodeUtf8Strict(bytes) === null) !== (manual[2] === "bin")) {
          this.errors.push(`recovery evidence ${relative} has the wrong extension for its bytes.`);
        }
      } else if (evidence) {
        if (sha256Hex(bytes) !== evidence[3]) {
          this.errors.push(
            `recovery evidence ${relative} was altered (its hash no longer matches its name).`,
          );
        }
      } else {
        this.warnings.push(`unexpected file ${relative}.`);
      }
    }
    // Quarantine stubs were noted while prepareAuthority read every record.
    for (const { kind, id, file } of this.stubEvidence) {
      this.checkEvidenceFile(file, `quarantine stub ${kind} ${id}`);
    }
  }

  private checkIndex(): void {
    const bytes = this.reader.read(this.paths.index);
    if (bytes === null) {
      this.warnings.push("index is missing; run index to rebuild it.");
      return;
    }
    if (!isUtf8Bytes(bytes) || !everyRowHasEightColumns(bytes)) {
      this.errors.push("index.tsv has rows without 8 columns; run index to rebuild it.");
    }
  }
}
