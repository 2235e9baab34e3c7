/**
 * Refuses team memory's work on a clone whose `.bimri/` git tracks: that
 * folder is this clone's own, host-bound state (trust decisions, keys, the
 * replica ID), never shared. Files of it that arrived through git were
 * written by whoever could push, who could thereby pre-trust a replica or
 * hand this clone a known key. Runs git once, only on the verbs that import
 * or decide trust (never on the everyday path).
 */
import { BimriError } from "../errors.ts";
import { visible } from "../model/visible.ts";
import { gitWorkTreeOf } from "../store/git_tree.ts";

/** Host-bound paths under `.bimri/` that git tracks, relative to `root` (none without git or a work tree). */
export function trackedLocalState(root: string): string[] {
  if (gitWorkTreeOf(root) === null) return [];
  let out: Deno.CommandOutput;
  try {
    out = new Deno.Command("git", {
      args: ["ls-files", "-z", "--cached", "--", ".bimri"],
      cwd: root,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
  } catch {
    return []; // no git on this machine: nothing can have arrived through it
  }
  if (!out.success) return [];
  return new TextDecoder().decode(out.stdout).split("\0").filter(hostBound);
}

/**
 * The host-bound files of `.bimri/` (`*.local.json`, and the share-sent,
 * share-trust and share-key files): a team that once committed the rest of
 * `.bimri/` (the reference engine's own way of sharing) is not refused for
 * it, but no clone may take its identity, keys or trust from git.
 */
function hostBound(path: string): boolean {
  return path.endsWith(".local.json") || /^\.bimri\/share-/.test(path);
}

/** Throws when git tracks anything under `.bimri/` at `root`; `what` names the refused action. */
export function refuseTrackedLocalState(root: string, what: string): void {
  const tracked = trackedLocalState(root);
  if (tracked.length === 0) return;
  const more = tracked.length > 1 ? ` and ${tracked.length - 1} more files under .bimri/` : "";
  throw new BimriError(
    "refused",
    `git tracks ${
      visible(tracked[0])
    }${more}: .bimri/ is this clone's private store, and files of it that came from the repository were written by whoever could push (trust decisions, keys, the replica ID); ${what}. Run \`git rm -r --cached .bimri\` and commit that; if this clone did not write those files itself (a fresh clone), delete .bimri/ first, then run the command again.`,
  );
}
