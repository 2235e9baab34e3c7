/**
 * Whether a folder lies inside a git work tree, without running git: the
 * folder or one of its ancestors holds a `.git` entry (a folder, or the file
 * a linked worktree or submodule has). Used by `share init` and install.
 */
import { lstatOrNull } from "./files.ts";
import { nativePath } from "./os_path.ts";

/** The work tree's top folder holding `.git` at or above `folder`, else null. */
export function gitWorkTreeOf(folder: string): string | null {
  let dir = nativePath.resolve(folder);
  while (true) {
    if (lstatOrNull(nativePath.join(dir, ".git")) !== null) return dir;
    const parent = nativePath.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** Files git keeps in its folder while an operation that rewrites the working tree is stopped part-way. */
const IN_PROGRESS = [
  "rebase-merge",
  "rebase-apply",
  "MERGE_HEAD",
  "CHERRY_PICK_HEAD",
  "REVERT_HEAD",
];

/**
 * True while git is in the middle of a rebase, merge, cherry-pick or revert in
 * the work tree holding `folder` (without running git): a file written into
 * the working tree then could stop git from bringing back the same file.
 */
export function gitOperationInProgress(folder: string): boolean {
  const top = gitWorkTreeOf(folder);
  if (top === null) return false;
  const dotGit = nativePath.join(top, ".git");
  let gitDir = dotGit;
  if (lstatOrNull(dotGit)?.isFile) {
    // A linked worktree or submodule: `.git` names its git folder.
    let text = "";
    try {
      text = Deno.readTextFileSync(dotGit);
    } catch {
      return false;
    }
    const named = /^gitdir:\s*(.+?)\s*$/m.exec(text);
    if (named === null) return false;
    gitDir = nativePath.resolve(top, named[1]);
  }
  return IN_PROGRESS.some((name) => lstatOrNull(nativePath.join(gitDir, name)) !== null);
}
