/**
 * Every path of a store, built only from validated IDs so that no path
 * derived from an ID can leave its folder.
 */
import { nativePath } from "./os_path.ts";
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

/** The part of a path flavour that StorePaths uses. */
export type PathJoiner = { join(...segments: string[]): string };

/** Paths of one store rooted at `root`. */
export class StorePaths {
  /** Absolute project root. */
  readonly root: string;
  /** `<root>/.bimri`. */
  readonly dir: string;

  /** Joins with the separator of the OS the store lives on. */
  readonly #join: (...segments: string[]) => string;

  /** `flavor` defaults to the running OS (unit tests pass the Windows or POSIX flavour). */
  constructor(root: string, flavor: PathJoiner = nativePath) {
    this.root = root;
    this.#join = (...segments) => flavor.join(...segments);
    this.dir = this.#join(root, ".bimri");
  }

  /** `<root>/bimri.md`, the generated view. */
  get view(): string {
    return this.#join(this.root, "bimri.md");
  }
  /** `.bimri/state.json`. */
  get state(): string {
    return this.#join(this.dir, "state.json");
  }
  /** `.bimri/engine.lock`. */
  get lock(): string {
    return this.#join(this.dir, "engine.lock");
  }
  /** `.bimri/index.tsv`. */
  get index(): string {
    return this.#join(this.dir, "index.tsv");
  }
  /** `.bimri/audit-witness.json` (reference-only cache). */
  get auditWitness(): string {
    return this.#join(this.dir, "audit-witness.json");
  }
  /** A folder under `.bimri/`. */
  folder(name: string): string {
    return this.#join(this.dir, name);
  }
  /** Run log path. */
  log(run: string): string {
    return this.#join(this.dir, "log", `${checked(run, RUN_ID, "run")}.md`);
  }
  /** Revision path for a revision number. */
  revision(n: number): string {
    if (!Number.isInteger(n) || n < 0 || n > 999999) {
      throw new BimriError("invalid-input", `invalid revision number: ${n}`);
    }
    return this.#join(this.dir, "revisions", `${revisionName(n)}.md`);
  }
  /** Proposal path. */
  proposal(id: string): string {
    return this.#join(this.dir, "proposals", `${checked(id, PROPOSAL_ID, "proposal")}.json`);
  }
  /** Decision path. */
  decision(id: string): string {
    return this.#join(this.dir, "decisions", `${checked(id, PROPOSAL_ID, "proposal")}.json`);
  }
  /** Conflict path. */
  conflict(id: string): string {
    return this.#join(this.dir, "conflicts", `${checked(id, CONFLICT_ID, "conflict")}.json`);
  }
  /** Resolution path. */
  resolution(id: string): string {
    return this.#join(this.dir, "resolutions", `${checked(id, CONFLICT_ID, "conflict")}.json`);
  }
  /** Archive month file for `YYYY-MM`. */
  archiveMonth(month: string): string {
    if (!/^[0-9]{4}-[0-9]{2}$/.test(month)) {
      throw new BimriError("invalid-input", `invalid archive month: ${month}`);
    }
    return this.#join(this.dir, "archive", `${month}.md`);
  }
  /** A file in `.bimri/recovery/` (name must be a plain file name). */
  recovery(name: string): string {
    if (!/^[A-Za-z0-9._-]+$/.test(name) || name.startsWith(".")) {
      throw new BimriError("invalid-input", `invalid recovery file name: ${name}`);
    }
    return this.#join(this.dir, "recovery", name);
  }
}
