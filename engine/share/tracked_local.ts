/**
 * Refuses team memory's work on a clone whose local store (`.bimri/`,
 * `bimri.md`) git tracks: in a shared project that store is this clone's
 * own, never shared (`.bimri-share/` is). Files of it that arrived through
 * git were written by whoever could push, who could thereby pre-trust a
 * replica, hand this clone a known key, or plant memory that the next export
 * would sign as this clone's. Runs git once, only on the share verbs and
 * doctor (never on the everyday path).
 */
import { BimriError } from "../errors.ts";
import { visible } from "../model/visible.ts";
import { gitWorkTreeOf } from "../store/git_tree.ts";

/**
 * Paths of the local store (`.bimri/`, `bimri.md`) that git tracks, relative
 * to `root`; none outside a git work tree; null when git cannot answer (not
 * installed, or refusing the repository), which the callers treat as unsafe.
 */
export function trackedLocalState(root: string): string[] | null {
  if (gitWorkTreeOf(root) === null) return [];
  let out: Deno.CommandOutput;
  try {
    out = new Deno.Command("git", {
      // Case-insensitive: a checkout on macOS or Windows writes `.BIMRI/x` into `.bimri/`.
      args: ["ls-files", "-z", "--cached", "--", ":(icase).bimri", ":(icase)bimri.md"],
      cwd: root,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
  } catch {
    return null; // no git on PATH
  }
  if (!out.success) return null;
  return new TextDecoder().decode(out.stdout).split("\0").filter(localStoreFile);
}

/**
 * Every file of the local store counts, not only the host-bound ones: a
 * checkout of a branch that tracks `.bimri/state.json` (or `bimri.md`)
 * silently replaces this clone's ignored files, and what then looks like a
 * commit of another engine would be exported, signed as this clone's.
 */
function localStoreFile(path: string): boolean {
  const lower = path.toLowerCase();
  // `.bimri` itself: a submodule (gitlink) or a committed link in its place.
  return lower === "bimri.md" || lower === ".bimri" || lower.startsWith(".bimri/");
}

/**
 * Why the local store at `root` may have come from the repository (git tracks
 * some of it, or git cannot say), ending with `what` (the refused action) and
 * the next step; null when git tracks none of it.
 */
export function trackedLocalProblem(root: string, what: string): string | null {
  const tracked = trackedLocalState(root);
  if (tracked === null) {
    return `git could not list the files it tracks in ${
      visible(root)
    } (is git installed and on PATH, and does it accept this repository? \`git status\` says), so bimri cannot tell whether its local store came from the repository; ${what}. Fix what \`git status\` reports, then run the command again.`;
  }
  if (tracked.length === 0) return null;
  const more = tracked.length > 1 ? ` and ${tracked.length - 1} more files of the local store` : "";
  return `git tracks ${
    visible(tracked[0])
  }${more}: in a shared project .bimri/ and bimri.md are this clone's own store, and files of them that came from the repository were written by whoever could push (memory, trust decisions, keys, the replica ID); ${what}. Run \`git rm -r --cached --ignore-unmatch .bimri bimri.md\` and commit that; if this clone did not write those files itself (a fresh clone, or a checkout of a branch that tracked them), delete .bimri/ and bimri.md first, then run the command again.`;
}

/** Throws trackedLocalProblem's refusal when there is one; `what` names the refused action. */
export function refuseTrackedLocalState(root: string, what: string): void {
  const problem = trackedLocalProblem(root, what);
  if (problem !== null) throw new BimriError("refused", problem);
}
