/**
 * `share init`: makes this store a replica. Mints the replica ID, creates
 * `.bimri-share/` (committed) with this replica's folder, and exports the
 * current memory as seed records so the other clones receive it. The
 * `.gitignore` lines that keep the local store out of git are computed here;
 * the command asks before writing them.
 */
import { join } from "../store/os_path.ts";
import { atomicReplace, lstatOrNull } from "../store/files.ts";
import { gitignoreMode, readGitignore, requireRealFolder } from "./safe_read.ts";
import type { Store } from "../store/store.ts";
import type { StorePaths } from "../store/paths.ts";
import { mintReplicaId } from "./ids.ts";
import { ensureReplicaFolder, finishSeeding } from "./export.ts";
import {
  freshShareState,
  loadShare,
  saveShare,
  seeHead,
  SHARE_FOLDER,
  shareDir,
  writeReplicaFile,
} from "./state.ts";
import type { ShareContext } from "./context.ts";

/** The lines `share init` adds to `.gitignore`: the local store stays local. */
export const IGNORED = ["bimri.md", ".bimri/"] as const;

const README = `# Team memory records (bimri share)

Each folder here belongs to one clone (a replica) and holds immutable
records of the memory changes that clone accepted. Commit this folder; run
\`bimri share pull\` after \`git pull\` to import the other clones' records.
Never edit or delete records by hand.
`;

/** The `.gitignore` lines still missing from `text` (null: no file). */
export function missingIgnoreLines(text: string | null): string[] {
  const lines = new Set((text ?? "").split(/\r?\n/).map((l) => l.trim()));
  return IGNORED.filter((l) =>
    !lines.has(l) && !lines.has(`/${l}`) && !lines.has(l.replace(/\/$/, ""))
  );
}

/** Adds the missing lines to `<root>/.gitignore`; returns the lines added. */
export function addIgnoreLines(root: string): string[] {
  const path = join(root, ".gitignore");
  const text = readGitignore(root);
  const mode = gitignoreMode(root) ?? 0o644;
  const missing = missingIgnoreLines(text);
  if (missing.length === 0) return [];
  const base = text === null || text === "" || text.endsWith("\n") ? (text ?? "") : text + "\n";
  atomicReplace(
    path,
    base + "# bimri: the local memory store (shared through .bimri-share/)\n" +
      missing.join("\n") + "\n",
  );
  Deno.chmodSync(path, mode); // .gitignore keeps its mode
  return missing;
}

/** What `share init` did. */
export type InitResult = { replica: string; created: boolean; seeded: number };

/**
 * Makes the store a replica (idempotent): an existing replica keeps its ID
 * (a copied or moved folder gets a new one). New replicas export every
 * current subject as a seed record.
 */
export function initShare(store: Store): { ctx: ShareContext; result: InitResult } {
  const existing = loadShare(store.paths, true);
  if (existing !== null) {
    ensureShareFolder(store.paths);
    ensureReplicaFolder(existing);
    // A seeding cut short by a crash continues where its records end.
    const seeded = finishSeeding(store, existing);
    return {
      ctx: existing,
      result: { replica: existing.state.replica, created: false, seeded },
    };
  }
  const replica = mintReplicaId();
  const state = freshShareState(replica, store.paths.root);
  const reason = /^accepted (R[0-9]{6}-Q[0-9]{3})$/.exec(store.state.last_revision_reason ?? "");
  state.lastSource = reason ? reason[1] : null;
  seeHead(state, store);
  const ctx: ShareContext = { paths: store.paths, shareDir: shareDir(store.paths), state };
  ensureShareFolder(store.paths);
  ensureReplicaFolder(ctx);
  // The share state first: a crash before the replica file leaves no replica
  // (init runs again); after it, the next command finishes the seeding.
  state.seeding = true;
  saveShare(ctx);
  writeReplicaFile(store.paths, replica);
  const seeded = finishSeeding(store, ctx);
  return { ctx, result: { replica, created: true, seeded } };
}

/**
 * `.bimri-share/.gitattributes`: records are byte-exact whatever a clone's
 * line-ending settings (core.autocrlf, a project-wide `* text=auto`).
 */
export const GITATTRIBUTES =
  "# bimri: team memory records are byte-exact (no line-ending conversion)\n* -text\n";

/** Creates `.bimri-share/`, its README and its .gitattributes when missing. */
export function ensureShareFolder(paths: StorePaths): void {
  const dir = shareDir(paths);
  requireRealFolder(dir, SHARE_FOLDER);
  if (lstatOrNull(dir) === null) Deno.mkdirSync(dir, { recursive: true });
  const readme = join(dir, "README.md");
  if (lstatOrNull(readme) === null) atomicReplace(readme, README);
  const attributes = join(dir, ".gitattributes");
  if (lstatOrNull(attributes) === null) atomicReplace(attributes, GITATTRIBUTES);
}

/** True when the project holds a `.bimri-share/` folder. */
export function hasShareFolder(root: string): boolean {
  return lstatOrNull(join(root, SHARE_FOLDER))?.isDirectory === true;
}
