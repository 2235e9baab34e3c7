/** `share init|pull|status`: team memory across clones through git. */
import { BimriError } from "../engine/errors.ts";
import { storeExists, withStore } from "../engine/store/store.ts";
import { StorePaths } from "../engine/store/paths.ts";
import type { Store } from "../engine/store/store.ts";
import { finishPendingExports } from "../engine/share/export.ts";
import { problemLines, pullShare } from "../engine/share/import.ts";
import type { PullResult } from "../engine/share/pull.ts";
import {
  addIgnoreLines,
  ensureShareFolder,
  hasShareFolder,
  initShare,
  missingIgnoreLines,
} from "../engine/share/init.ts";
import { repairAlteredOwnRecords } from "../engine/share/keep.ts";
import {
  gapLines,
  moreProblemsLine,
  namedProblems,
  problemMessage,
  scanShare,
  totalWaiting,
} from "../engine/share/scan.ts";
import { readGitignore, requireRealFolder } from "../engine/share/safe_read.ts";
import { decideTrust, holdUntrusted } from "../engine/share/trust.ts";
import { refuseTrackedLocalState } from "../engine/share/tracked_local.ts";
import { ensureOwnKey, fingerprint, repairOwnKey } from "../engine/share/sign.ts";
import { noteShare } from "../engine/share/notice.ts";
import { visible } from "../engine/model/visible.ts";
import { loadShare, seenVector, SHARE_FOLDER } from "../engine/share/state.ts";
import type { ShareContext } from "../engine/share/context.ts";
import { listConflictIds, readConflict, readResolution } from "../engine/records/conflict.ts";
import { gitWorkTreeOf } from "../engine/store/git_tree.ts";
import {
  boolFlag,
  type Command,
  type CommandContext,
  type CommandResult,
  ok,
  stringFlag,
} from "./command.ts";
import { join, relative } from "node:path";
import { currentRuntimePrefix } from "../engine/install/runtime.ts";
import { gitHooksFolder, hookStates, installHooks, uninstallHooks } from "../engine/share/hooks.ts";
import {
  currentMemoryTexts,
  refuseCredentialsBeforePublishing,
  refuseCredentialsInCurrentMemory,
} from "../engine/guard/publish_screen.ts";

const HELP = `usage: bimri share init [--yes]
       bimri share pull [--max N]
       bimri share status
       bimri share trust <replica> [--fingerprint F] --human-approved
       bimri share distrust <replica> [--fingerprint F] --human-approved
       bimri share hooks install|uninstall|status

Team memory across clones of one git repository. Every clone keeps its own
local store (bimri.md and .bimri/ stay out of git); accepted changes are also
written as immutable records to .bimri-share/<replica>/, which git carries.

  init     make this store a replica: a random replica ID, .bimri-share/ (commit
           it), seed records of the current memory, and bimri.md and .bimri/ in
           .gitignore (asks first; --yes to skip the question)
  pull     import the other replicas' records (run after git pull); concurrent
           edits of one key become ordinary conflicts (bimri review)
  status   replicas, records waiting to be pulled, gaps, conflicts from imports
  trust    the owner trusts a replica with the signing key its folder
           publishes now: its records apply from the next pull (a replica's
           records wait until then, and again after it changes its key)
  distrust the owner refuses a replica: none of its records apply
  hooks    git hooks (opt-in): post-merge, post-checkout and post-rewrite run
           share pull; pre-commit stages .bimri-share/; existing hooks (also
           under core.hooksPath) are kept and still run; never block git

  --yes    init: update .gitignore without asking
  --max N  pull: import at most N records this time (default 100000); the
           rest wait for the next pull, which says how many remain
  --fingerprint F   trust/distrust: the key fingerprint the question showed;
                    refused when the replica's key has changed since
  --human-approved  trust/distrust: attests that the owner decided this`;

function askYes(question: string): boolean {
  if (!Deno.stdin.isTerminal()) return false;
  const answer = prompt(question);
  return answer !== null && /^y(es)?$/i.test(answer.trim());
}

function init(ctx: CommandContext, yes: boolean): CommandResult {
  // Sharing travels through git; outside a work tree it cannot.
  if (gitWorkTreeOf(ctx.root) === null) {
    throw new BimriError(
      "usage",
      `${ctx.root} is not inside a git work tree, and share carries memory through git. Run \`git init\` there (or clone the project's repository), then \`bimri share init\` again; nothing was changed.`,
    );
  }
  requireRealFolder(join(ctx.root, SHARE_FOLDER), SHARE_FOLDER);
  // Sharing needs the local store local: one git tracks would be signed as this clone's.
  refuseTrackedLocalState(ctx.root, "nothing was shared");
  // Issue 39: current memory is what init publishes; a credential in it refuses
  // before anything (even .gitignore) is written (engine/guard/publish_screen.ts).
  refuseCredentialsInCurrentMemory(ctx.root, "share init");
  const missing = missingIgnoreLines(readGitignore(ctx.root));
  let ignoreAdded: string[] = [];
  const notices: string[] = [];
  if (missing.length > 0) {
    if (
      yes ||
      askYes(`Add ${missing.join(" and ")} to .gitignore (the local store stays out of git)? [y/N]`)
    ) {
      ignoreAdded = addIgnoreLines(ctx.root);
    } else {
      notices.push(
        `BIMRI: .gitignore was not changed; add ${
          missing.join(" and ")
        } to it (or run \`bimri share init --yes\`), so git carries only .bimri-share/.`,
      );
    }
  }
  return withStore(ctx.root, (store) => {
    // Issue 39: and again under the lock, in case memory changed since (publish_screen.ts).
    refuseCredentialsBeforePublishing(ctx.root, "share init", currentMemoryTexts(store));
    finishPendingExports(store);
    const { ctx: share, result } = initShare(store);
    ensureOwnKey(share); // published even before the first record
    const lines = result.created
      ? [
        `BIMRI: share initialized; replica ${result.replica}; exported ${result.seeded} seed records to .bimri-share/${result.replica}/.`,
        "Commit .bimri-share/ (and .gitignore); after each git pull run `bimri share pull`.",
      ]
      : [`BIMRI: already shared as replica ${result.replica}.`];
    return ok(lines.join("\n") + "\n", {
      replica: result.replica,
      created: result.created,
      seeded: result.seeded,
      gitignore_added: ignoreAdded,
    }, notices);
  });
}

/** The context of a store that is shared, making a fresh clone a replica on first pull. */
function replicaContext(store: Store): ShareContext {
  const ctx = finishPendingExports(store);
  if (ctx !== null) {
    ensureShareFolder(store.paths);
    return ctx;
  }
  if (!hasShareFolder(store.paths.root)) {
    throw new BimriError(
      "refused",
      "this store is not shared and the project has no .bimri-share/ folder; run `bimri share init` first.",
    );
  }
  return initShare(store).ctx;
}

/**
 * Writes back this clone's own key file when a pusher altered it, with a
 * notice on stderr (nothing on a store that is not shared yet).
 */
function noteKeyRepair(store: Store): void {
  const ctx = loadShare(store.paths, false);
  const note = ctx === null ? null : repairOwnKey(ctx);
  if (note !== null) noteShare(note);
}

/** Renders a pull's summary line. */
export function pullSummary(r: PullResult): string {
  return `BIMRI: share pull imported ${r.imported} records; applied ${r.applied}, already current ${r.noop}, superseded ${r.superseded}, new conflicts ${r.conflicts}, answered elsewhere ${r.resolved}, held ${r.held}, waiting ${r.blocked}.`;
}

/** Runs a pull on the store at `root` (also used by install and the MCP server). */
export function pullAt(root: string, max?: number): CommandResult {
  // No store is created where there is nothing to pull.
  if (!hasShareFolder(root) && !storeExists(new StorePaths(root))) {
    throw new BimriError(
      "refused",
      `${root} has no .bimri-share/ folder and no memory store, so there is nothing to pull. Run \`git pull\` in the project's clone first, or \`bimri share init\` to start sharing; nothing was created.`,
    );
  }
  refuseTrackedLocalState(root, "nothing was imported");
  return withStore(root, (store) => {
    noteKeyRepair(store); // this clone's key file a pusher altered: written back first
    const ctx = replicaContext(store);
    ensureOwnKey(ctx); // a replica of an earlier bimri publishes its key on its first pull
    repairAlteredOwnRecords(ctx); // an own record a pusher altered: written back before others read it
    const result = pullShare(store, ctx, max);
    const after = scanShare(ctx, { countOnly: true });
    const gaps = gapLines(after);
    result.blocked = totalWaiting(after) - (result.remaining ?? 0);
    const questions = result.questions ?? [];
    // A question this same pull saw answered is not announced.
    const open = result.conflictIds.filter((id) =>
      readResolution(store, id)?.status !== "resolved"
    );
    const lines = [
      ...questions.map((q) => q.text),
      ...open.map((id) =>
        `BIMRI CONFLICT ${id}: concurrent edits from another clone; run \`bimri review\` and let the owner resolve it.`
      ),
      pullSummary(result),
      ...(result.remaining
        ? [
          `BIMRI: ${result.remaining} more records remain past this pull's cap; run \`bimri share pull\` again.`,
        ]
        : []),
    ];
    const out = ok(lines.join("\n") + "\n", {
      replica: ctx.state.replica,
      revision: store.head.revision,
      imported: result.imported,
      applied: result.applied,
      noop: result.noop,
      superseded: result.superseded,
      conflicts: result.conflicts,
      conflict_ids: result.conflictIds,
      resolved: result.resolved,
      held: result.held,
      waiting: result.blocked,
      remaining: result.remaining ?? 0,
      gaps: after.gaps.map((g) => ({ ...g })),
      // The first few refused files, as on stderr; every one counted.
      problems: namedProblems(result.problems).named.map((p) => ({
        file: p.file,
        message: problemMessage(p),
      })),
      problems_total: result.problems.length,
      trust_questions: questions.map((q) => ({
        replica: q.replica,
        standing: q.standing,
        actor: q.actor,
        host: q.host,
        fingerprint: q.fingerprint,
        waiting: q.waiting,
      })),
    }, gaps);
    if (result.problems.length > 0) {
      out.exitCode = 2;
      out.stderr = [...gaps, ...problemLines(result.problems)];
    }
    return out;
  });
}

function status(ctx: CommandContext): CommandResult {
  // The pre-commit hook runs status: a store planted through git is refused before its key signs.
  if (hasShareFolder(ctx.root)) {
    refuseTrackedLocalState(ctx.root, "nothing was exported or written back");
  }
  return withStore(ctx.root, (store) => {
    // Before an export left pending signs anything (finishPendingExports).
    noteKeyRepair(store);
    const share = finishPendingExports(store);
    if (share === null) {
      const text = hasShareFolder(ctx.root)
        ? "BIMRI SHARE: this store is not a replica yet; run `bimri share pull` to build it from .bimri-share/.\n"
        : "BIMRI SHARE: not shared; run `bimri share init` to share this memory through git.\n";
      return ok(text, { shared: false, share_folder: hasShareFolder(ctx.root) });
    }
    // Also the pre-commit hook's check: an own record a pusher altered is written back.
    repairAlteredOwnRecords(share);
    const scan = scanShare(share, { countOnly: true });
    const seen = seenVector(share.state);
    const lines = [`BIMRI SHARE: replica ${share.state.replica} (${share.paths.root})`];
    const replicas = scan.replicas.map((r) => {
      const own = r.replica === share.state.replica;
      const pending = own ? 0 : scan.waiting.get(r.replica) ?? 0;
      const imported = own ? r.newest : seen[r.replica] ?? 0;
      lines.push(
        own
          ? `  ${r.replica}  this clone: exported ${r.newest} records`
          : `  ${r.replica}  ${r.newest} records; imported through ${imported}; waiting ${pending}`,
      );
      return { replica: r.replica, own, newest: r.newest, imported, waiting: pending };
    });
    const waiting = totalWaiting(scan);
    const candidates = new Set(Object.keys(share.state.candidates));
    const open = listConflictIds(store).filter((id) => {
      if (readResolution(store, id) !== null) return false;
      const c = readConflict(store, id);
      return c !== null && c.proposal_ids.some((p) => candidates.has(p));
    });
    lines.push(`Records waiting to be pulled: ${waiting}.`);
    lines.push(...gapLines(scan));
    lines.push(
      `Open conflicts from other clones: ${open.length}${
        open.length ? ` (${open.join(", ")})` : ""
      }.`,
    );
    const c = share.state.counts;
    lines.push(
      `Imported so far: applied ${c.applied}, already current ${c.noop}, superseded ${c.superseded}, conflicts ${c.conflicts}, answered elsewhere ${c.resolved}, held ${c.held}.`,
    );
    for (const p of namedProblems(scan.problems).named) {
      lines.push(`REFUSED: ${p.file} ${p.message}`);
    }
    const more = moreProblemsLine(scan.problems);
    if (more !== null) lines.push(`REFUSED: ${more}`);
    const questions = holdUntrusted(share, new Map(scan.pending), scan.waiting);
    for (const q of questions) lines.push(q.text);
    return ok(lines.join("\n") + "\n", {
      shared: true,
      replica: share.state.replica,
      replicas,
      waiting,
      open_conflicts: open,
      counts: { ...c },
      problems: namedProblems(scan.problems).named.map((p) => ({ ...p })),
      problems_total: scan.problems.length,
      gaps: scan.gaps.map((g) => ({ ...g })),
      trust_questions: questions.map((q) => ({ replica: q.replica, standing: q.standing })),
    });
  });
}

/** The `--max N` cap of one pull (at least 1). */
function pullMax(flags: Parameters<Command["run"]>[1]): number | undefined {
  const text = stringFlag(flags, "max");
  if (text === undefined) return undefined;
  const max = /^[0-9]{1,9}$/.test(text) ? Number(text) : 0;
  if (max < 1) {
    throw new BimriError("usage", "share pull --max must be a whole number, at least 1.");
  }
  return max;
}

/** `share trust|distrust <replica> --human-approved`: the owner's decision about a replica. */
function decide(
  ctx: CommandContext,
  sub: "trust" | "distrust",
  replica: string | undefined,
  approved: boolean,
  shown: string | undefined,
): CommandResult {
  if (replica === undefined) {
    throw new BimriError(
      "usage",
      `share ${sub}: name the replica, e.g. \`bimri share ${sub} <replica> --human-approved\` (replicas: \`bimri share status\`).`,
    );
  }
  if (!approved) {
    throw new BimriError(
      "refused",
      `share ${sub} is the owner's decision: an agent may not make it. The owner runs \`bimri share ${sub} ${
        visible(replica)
      } --human-approved\`.`,
    );
  }
  refuseTrackedLocalState(ctx.root, `nothing was ${sub}ed`);
  return withStore(ctx.root, (store) => {
    const share = replicaContext(store);
    const key = decideTrust(share, replica, sub === "trust" ? "trusted" : "distrusted", shown);
    const who = `${visible(key.actor)} on ${visible(key.host)}, fingerprint ${
      fingerprint(key.publicKey)
    }`;
    const text = sub === "trust"
      ? `BIMRI: replica ${replica} (${who}) is trusted in this clone; run \`bimri share pull\` to import its records.\n`
      : `BIMRI: replica ${replica} (${who}) is distrusted in this clone; none of its records will be imported.\n`;
    return ok(text, {
      replica,
      trusted: sub === "trust",
      fingerprint: fingerprint(key.publicKey),
      actor: key.actor,
      host: key.host,
    });
  });
}

function hooks(ctx: CommandContext, action: string | undefined): CommandResult {
  if (action !== "install" && action !== "uninstall" && action !== "status") {
    throw new BimriError(
      "usage",
      "share hooks: name an action: install, uninstall or status (bimri share --help).",
    );
  }
  const { hooks: folder, top } = gitHooksFolder(ctx.root);
  const rel = relative(top, ctx.root).replaceAll("\\", "/");
  const states = action === "install"
    ? installHooks(folder, currentRuntimePrefix().argv, rel)
    : action === "uninstall"
    ? uninstallHooks(folder)
    : hookStates(folder);
  const lines = [`BIMRI SHARE HOOKS: ${folder}`];
  for (const h of states) {
    lines.push(
      `  ${h.name}  ${
        h.installed
          ? h.chained ? "installed (runs the existing hook first)" : "installed"
          : h.foreign
          ? "another hook (install keeps it and runs it first)"
          : "not installed"
      }`,
    );
  }
  if (action === "install") {
    lines.push(
      "git pull, merge, checkout and rebase now run `bimri share pull`; commits stage .bimri-share/.",
    );
  }
  if (action === "uninstall") lines.push("bimri's git hooks are removed; earlier hooks are back.");
  return ok(lines.join("\n") + "\n", {
    hooks_folder: folder,
    hooks: states.map((h) => ({ ...h })),
  });
}

/** The share verb. */
export const shareCommand: Command = {
  name: "share",
  summary: "team memory across clones through git (init, pull, status)",
  help: HELP,
  flags: {
    yes: { type: "boolean" },
    "human-approved": { type: "boolean" },
    max: { type: "string" },
    fingerprint: { type: "string" },
  },
  progress: (positionals) => positionals[0] === "pull" ? "pulling team memory" : null,
  positionals: 2,
  run(ctx, flags, positionals) {
    const sub = positionals[0];
    if (sub === "hooks") return hooks(ctx, positionals[1]);
    if (sub === "trust" || sub === "distrust") {
      return decide(
        ctx,
        sub,
        positionals[1],
        boolFlag(flags, "human-approved"),
        stringFlag(flags, "fingerprint"),
      );
    }
    if (positionals.length > 1) {
      throw new BimriError(
        "usage",
        `share ${sub}: takes no further argument (bimri share --help).`,
      );
    }
    if (sub === "init") return init(ctx, boolFlag(flags, "yes"));
    if (sub === "pull") return pullAt(ctx.root, pullMax(flags));
    if (sub === "status") return status(ctx);
    throw new BimriError(
      "usage",
      "share: name a subcommand: init, pull, status, trust, distrust or hooks (bimri share --help).",
    );
  },
};
