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
