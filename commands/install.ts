/**
 * `install --target DIR [--quiescent]`: put BIMRI memory into a project, and
 * the hidden `__bimri-sentinel` verb the installer uses to prove its runtime.
 */
import { BimriError } from "../engine/errors.ts";
import { installProject } from "../engine/install/install.ts";
import { SENTINEL_VERB, sentinelAnswer } from "../engine/install/runtime.ts";
import { pathHintNotice } from "../engine/install/path_hint.ts";
import {
  addHostBoundLines,
  hostBoundNotice,
  missingHostBoundLines,
  readInstallGitignore,
} from "../engine/install/ignore_offer.ts";
import { gitWorkTreeOf } from "../engine/store/git_tree.ts";
import { loadNoFollowOpen } from "../engine/share/safe_read.ts";
import { resolve } from "node:path";
import { hasShareFolder } from "../engine/share/init.ts";
import { isShared } from "../engine/share/state.ts";
import { StorePaths } from "../engine/store/paths.ts";
import { boolFlag, type Command, ok, requiredFlag } from "./command.ts";

/** The install verb. */
export const installCommand: Command = {
  name: "install",
  summary: "install BIMRI memory into a project (adapters, store, runtime binding, hooks)",
  help: `usage: bimri install --target DIR [--quiescent]

  --target DIR   the project folder (absolute path recommended)
  --quiescent    required for a folder that already has a v5 store: you attest
                 that no process running an older engine can still write there

Copies the portable BIMRI files, merges the marked BIMRI block into AGENTS.md
and CLAUDE.md, initializes or migrates memory, proves and records the command
that runs bimri (.bimri/runtime.local.json), renders the Claude Code hooks
(.bimri/hooks.claude.local.json) and runs a self-check. An existing v5 store
gets a code-only update that leaves bimri.md and every record byte-identical.`,
  flags: { target: { type: "string" }, quiescent: { type: "boolean" } },
  progress: () => "installing",
  async run(_ctx, flags) {
    const target = requiredFlag(flags, "install", "target");
    const root = resolve(Deno.cwd(), target);
    // .gitignore is read before anything is written, bounded and never through a link (a
    // cloned project's committed .gitignore may be a link to /dev/zero, or a FIFO): one that
    // cannot be read so is refused with nothing installed, as share init refuses it.
    await loadNoFollowOpen();
    const inGit = gitWorkTreeOf(root) !== null;
    const ignoreText = inGit ? readInstallGitignore(root) : null;
    const report = await installProject({ target, quiescent: boolFlag(flags, "quiescent") });
    const result = ok(report.lines.join("\n") + "\n", { installed: true, ...report });
    // How to get a real `bimri` command when PATH has none.
    result.stderr = pathHintNotice(report.argv_prefix, Deno.env.get("PATH"));
    if (inGit) result.stderr.push(...offerHostBoundIgnores(report.target, ignoreText));
    // A fresh clone of a project whose team shares memory: build the store from the records.
    if (hasShareFolder(root) && !isShared(new StorePaths(root))) {
      const { pullAt } = await import("./share.ts");
      const pulled = pullAt(root);
      result.text += pulled.text;
      result.data.share = pulled.data;
      result.stderr = [...(result.stderr ?? []), ...(pulled.stderr ?? [])];
      if (pulled.exitCode !== 0) result.exitCode = pulled.exitCode;
    }
    return result;
  },
};

/**
 * In a git work tree, offers the .gitignore lines for install's host-bound
 * files missing from `text` (asks on a terminal, else prints them with the
 * command that adds them); returns the stderr lines.
 */
function offerHostBoundIgnores(target: string, text: string | null): string[] {
  const missing = missingHostBoundLines(text);
  if (missing.length === 0) return [];
  if (Deno.stdin.isTerminal()) {
    const answer = prompt(`Add ${missing.join(", ")} to .gitignore (host-bound files)? [y/N]`);
    if (answer !== null && /^y(es)?$/i.test(answer.trim())) {
      return [`BIMRI: added ${addHostBoundLines(target).join(", ")} to .gitignore.`];
    }
  }
  return [hostBoundNotice(missing)];
}

/** The hidden runtime sentinel: answers the installer's private check value. */
export const sentinelCommand: Command = {
  name: SENTINEL_VERB,
  summary: "internal: proves to the installer that this argv prefix runs this bimri",
  help: `usage: bimri ${SENTINEL_VERB} NONCE (internal; used by install)`,
  flags: {},
  positionals: 1,
  run(_ctx, _flags, positionals) {
    const nonce = positionals[0] ?? "";
    if (!/^[0-9a-f]{32}$/.test(nonce)) {
      throw new BimriError("usage", `${SENTINEL_VERB} needs a 32-character lowercase hex value.`);
    }
    return ok(sentinelAnswer(nonce), { sentinel: nonce });
  },
};
