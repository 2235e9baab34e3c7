/**
 * In a git work tree, the `.gitignore` lines that keep install's host-bound
 * files (absolute paths, this machine's settings) out of commits, as
 * `share init` offers its own lines: computed here, offered by the command.
 */
import { join } from "node:path";
import { BimriError } from "../errors.ts";
import { atomicReplace, lstatOrNull } from "../store/files.ts";
import { type GitignoreRefusal, readGitignore } from "../share/safe_read.ts";

/** Host-bound paths install creates or leads to (update receipts, local bindings, Claude's local settings). */
export const HOST_BOUND_IGNORES: readonly string[] = [
  ".bimri-update-backups/",
  ".bimri/*.local.json",
  ".claude/settings.local.json",
];

/**
 * Install's refusal of a `.gitignore` it cannot read safely (a link, FIFO,
 * device, oversized or non-UTF-8 file, as anyone who can push may commit):
 * checked before install writes anything, so nothing is installed.
 */
export const INSTALL_GITIGNORE_REFUSAL: GitignoreRefusal = {
  unchanged: "nothing was installed and .gitignore was not changed",
  next: `Make .gitignore a regular file (it may then hold ${
    HOST_BOUND_IGNORES.join(", ")
  }, added by hand), then run \`bimri install\` again.`,
};

/**
 * `<root>/.gitignore`'s text (null: no file), read bounded and never through
 * a link; refused in install's words.
 */
export function readInstallGitignore(root: string): string | null {
  return readGitignore(root, INSTALL_GITIGNORE_REFUSAL);
}

/** The host-bound lines `.gitignore` text (null: no file) does not hold yet. */
export function missingHostBoundLines(text: string | null): string[] {
  const lines = new Set((text ?? "").split(/\r?\n/).map((l) => l.trim().replace(/^\//, "")));
  const storeIgnored = lines.has(".bimri/") || lines.has(".bimri");
  return HOST_BOUND_IGNORES.filter((l) => {
    if (l.startsWith(".bimri/") && storeIgnored) return false;
    return !lines.has(l) && !lines.has(l.replace(/\/$/, ""));
  });
}

/**
 * Appends the missing host-bound lines to `<root>/.gitignore` (keeping its
 * mode; a linked .gitignore is refused); returns the lines added.
 */
export function addHostBoundLines(root: string): string[] {
  const path = join(root, ".gitignore");
  const info = lstatOrNull(path);
  if (info?.isSymlink) {
    throw new BimriError(
      "store-unsafe",
      ".gitignore is a symbolic link; BIMRI does not write through links. Add the lines yourself; nothing was changed.",
    );
  }
  const text = readInstallGitignore(root);
  const missing = missingHostBoundLines(text);
  if (missing.length === 0) return [];
  const base = text === null || text === "" || text.endsWith("\n") ? (text ?? "") : text + "\n";
  atomicReplace(
    path,
    base + "# bimri: host-bound files (absolute paths, this machine only)\n" +
      missing.join("\n") + "\n",
  );
  if (info?.mode != null) {
    try {
      Deno.chmodSync(path, info.mode & 0o777);
    } catch { /* no permission bits on this platform */ }
  }
  return missing;
}

/** The stderr notice offering `missing` lines when install may not ask. */
export function hostBoundNotice(missing: readonly string[]): string {
  return `BIMRI: this is a git work tree: keep install's host-bound files out of commits by adding ${
    missing.join(", ")
  } to .gitignore, e.g. printf '%s\\n' ${missing.map((l) => `'${l}'`).join(" ")} >> .gitignore`;
}
