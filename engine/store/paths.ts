/**
 * Every path of a store, built only from validated IDs so that no path
 * derived from an ID can leave its folder.
 */
import { join } from "node:path";
import { BimriError } from "../errors.ts";
import { CONFLICT_ID, PROPOSAL_ID, revisionName, RUN_ID } from "../model/ids.ts";

/** The twelve folders every store has under `.bimri/`. */
export const STORE_FOLDERS: readonly string[] = [
  "log",
  "proposals",
  "decisions",
  "revisions",
  "conflicts",
  "resolutions",
  "archive",
  "inbox",
  "backups",
  "recovery",
  "migrations",
  "audit-manifests",
];

function checked(id: string, grammar: RegExp, what: string): string {
  if (!grammar.test(id)) throw new BimriError("invalid-input", `invalid ${what} ID: ${id}`);
  return id;
}

/** Paths of one store rooted at `root`. */
export class StorePaths {
  /** Absolute project root. */
  readonly root: string;
  /** `<root>/.bimri`. */
  readonly dir: string;

  constructor(root: string) {
    this.root = root;
    this.dir = join(root, ".bimri");
  }

  /** `<root>/bimri.md`, the generated view. */
  get view(): string {
    return join(this.root, "bimri.md");
  }
  /** `.bimri/state.json`. */
  get state(): string {
    return join(this.dir, "state.json");
  }
  /** `.bimri/engine.lock`. */
  get lock(): string {
    return join(this.dir, "engine.lock");
  }
  /** `.bimri/index.tsv`. */
  get index(): string {
    return join(this.dir, "index.tsv");
  }
  /** `.bimri/audit-witness.json` (reference-only cache). */
  get auditWitness(): string {
    return join(this.dir, "audit-witness.json");
  }
  /** A folder under `.bimri/`. */
  folder(name: string): string {
    return join(this.dir, name);
  }
  /** Run log path. */
  log(run: string): string {
    return join(this.dir, "log", `${checked(run, RUN_ID, "run")}.md`);
  }
  /** Revision path for a revision number. */
  revision(n: number): string {
    if (!Number.isInteger(n) || n < 0 || n > 999999) {
      throw new BimriError("invalid-input", `invalid revision number: ${n}`);
    }
    return join(this.dir, "revisions", `${revisionName(n)}.md`);
  }
  /** Proposal path. */
  proposal(id: string): string {
    return join(this.dir, "proposals", `${checked(id, PROPOSAL_ID, "proposal")}.json`);
  }
  /** Decision path. */
  decision(id: string): string {
    return join(this.dir, "decisions", `${checked(id, PROPOSAL_ID, "proposal")}.json`);
  }
  /** Conflict path. */
  conflict(id: string): string {
    return join(this.dir, "conflicts", `${checked(id, CONFLICT_ID, "conflict")}.json`);
  }
  /** Resolution path. */
  resolution(id: string): string {
    return join(this.dir, "resolutions", `${checked(id, CONFLICT_ID, "conflict")}.json`);
  }
  /** Archive month file for `YYYY-MM`. */
  archiveMonth(month: string): string {
    if (!/^[0-9]{4}-[0-9]{2}$/.test(month)) {
      throw new BimriError("invalid-input", `invalid archive month: ${month}`);
    }
    return join(this.dir, "archive", `${month}.md`);
  }
  /** A file in `.bimri/recovery/` (name must be a plain file name). */
  recovery(name: string): string {
    if (!/^[A-Za-z0-9._-]+$/.test(name) || name.startsWith(".")) {
      throw new BimriError("invalid-input", `invalid recovery file name: ${name}`);
    }
    return join(this.dir, "recovery", name);
  }
}
