/**
 * The state one doctor audit shares between its checks: findings, folder
 * listings, streamed key lookups by revision and the kept facts of records.
 */
import type { RecordProver } from "../records/legacy_claim.ts";
import type { MemoryEntry } from "../model/hot.ts";
import { pyStrip } from "../model/text.ts";
import type { JsonObject } from "../model/json.ts";
import type { StorePaths } from "../store/paths.ts";
import type { State } from "../model/state.ts";
import type { FolderEntry } from "./authority.ts";
import { BulkReader, nativeSha256 } from "./bulk_read.ts";
import type { RevisionParser, RevisionView } from "./revision_pass.ts";
import type { AuthorityKind } from "./schemas.ts";
import type { DecisionFacts, ProposalFacts } from "./doctor_facts.ts";

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

/** One archive row, split into its fields. */
export type ArchiveRow = { date: string; by: string; reason: string; raw: string };

/** The head revision as read: its bytes and its parse (null when not UTF-8). */
export type LoadedRevision = { bytes: Uint8Array; view: RevisionView | null };

/** A folder listing kept compactly: sorted names and type bits (1 file, 2 link, 4 folder). */
export type Listing = { names: string[]; kinds: Uint8Array };

/** What the audit keeps of a key's line at a revision; `lastRun` is a Tier 2 line's `L:` run. */
export type KeyLine = { hash: string; tier: number; id: string; lastRun: string | null } | null;

/** What the audit keeps of an entry's line (its hash, tier, ID and last run). */
export function keyLineOf(raw: string, entry: MemoryEntry): KeyLine {
  // Only the line's hash is kept (thousands of answers; the text is not needed).
  return {
    hash: nativeSha256(pyStrip(raw)),
    tier: entry.tier,
    id: entry.id,
    lastRun: entry.tier === 2 ? entry.last_run : null,
  };
}

/** What every check of one audit reads and adds to (doctor_files.ts, doctor_authority.ts). */
export abstract class AuditState {
  readonly errors: string[] = [];
  readonly warnings: string[] = [];
  protected state!: State;
  /** SHA-256 of every revision file (numbers present on disk). */
  protected revisionHashes = new Map<number, string>();
  protected head: LoadedRevision | null = null;
  /** One listing per folder per audit (entry types come without lstat). */
  protected listings = new Map<string, Listing>();
  /** Parses each revision from the one before it where it can (see revision_pass.ts). */
  protected parser!: RevisionParser;
  /** Key lookups the effect checks need, by revision, answered while revisions stream by. */
  protected queries = new Map<number, string[]>();
  protected answers = new Map<number, Map<string, KeyLine>>();
  /** Authority read once, before the revisions (see prepareAuthority). */
  /** Graph findings, computed while the facts are at hand and reported in checkAuthority. */
  protected graphIssues: string[] = [];
  /** Where conflicts' snapshots must hold in their recorded residency (see residencyClaims). */
  protected claims: [number, string, string][] = [];
  protected proposals = new Map<string, ProposalFacts>();
  protected decisions = new Map<string, DecisionFacts>();
  protected conflicts = new Map<string, JsonObject>();
  protected resolutions = new Map<string, JsonObject>();
  protected stubEvidence: { kind: AuthorityKind; id: string; file: string }[] = [];
  /** Archive rows by the proposal that wrote them. */
  protected archiveBy = new Map<string, ArchiveRow[]>();
  /** One reused buffer for every file the audit reads (see bulk_read.ts). */
  protected reader = new BulkReader();
  /** Leftover temporary files, relative to the root (see collectTemporaryFiles). */
  protected temporaryFiles: string[] = [];

  constructor(
    protected readonly paths: StorePaths,
    protected readonly shadow: ShadowRecord | null,
    protected readonly proveLegacyRecord: RecordProver | null,
  ) {}

  protected isShadowed(kind: AuthorityKind, id: string): boolean {
    return this.shadow !== null && this.shadow.kind === kind && this.shadow.id === id;
  }

  /**
   * The entries of a store folder (types from the listing, never followed),
   * sorted by name, listed once per audit and kept compactly (names plus type
   * bits: tens of thousands of entries; the entry objects are short-lived).
   */
  protected *entries(folder: string): Generator<FolderEntry & { isDirectory: boolean }> {
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

  /** Queues a key lookup at `revision` for the revision pass. */
  protected ask(revision: number, key: string): void {
    if (typeof revision !== "number" || typeof key !== "string") return;
    // An array, not a set: a revision is asked for one to three keys.
    const keys = this.queries.get(revision);
    if (!keys) this.queries.set(revision, [key]);
    else if (!keys.includes(key)) keys.push(key);
  }

  /** The key's line at `revision`; undefined when that revision is missing or unreadable. */
  protected keyLine(revision: number, key: string): KeyLine | undefined {
    if (revision === this.state.head_revision && this.head) {
      if (!this.head.view) return undefined;
      const found = this.head.view.entries.find((e) => e.entry.key === key);
      return found ? keyLineOf(found.raw, found.entry) : null;
    }
    return this.answers.get(revision)?.get(key);
  }
}
