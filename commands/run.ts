/**
 * Runs one verb for the CLI and the MCP server: team memory's wiring for a
 * shared store, a `secrets redact` cut short, and the masking of redacted
 * secrets in what the verb prints, each only where the store needs it. The
 * rare stops of a verb before it wrote anything (a module loaded on demand,
 * an older v5 state to upgrade, a v1-v3 retirement to finish) are handled
 * by run_recovery.ts, which loads only when a verb throws. Light enough for
 * main.ts to load before any verb: the store's modules (store.ts) come with
 * the verb, or load here for the verbs that need them up front.
 */
import type { Command, CommandContext, CommandResult, FlagValues } from "./command.ts";
import { entryMayExist, lstatOrNull, rememberListings } from "../engine/store/files.ts";
import { nativePath } from "../engine/store/os_path.ts";

/** Runs `command` for the CLI or the MCP server. */
export async function runCommand(
  command: Command,
  ctx: CommandContext,
  flags: FlagValues,
  positionals: string[],
): Promise<CommandResult> {
  // The policy file is looked for before, in and after the verb: one listing serves them all.
  rememberListings(true);
  try {
    // Team memory joins the write path only for a store that is shared (share_wiring.ts);
    // for any other store (one lstat) its wiring module is not even loaded.
    if (shareMayBeWired(command.name, ctx.root)) {
      shareWiring ??= await import("./share_wiring.ts");
      await shareWiring.wireShareFor(command.name, ctx.root);
    }
    // The check of a foreign state.json's cold records (store.ts) loads up front for
    // every verb but those that load it on demand (ON_DEMAND_VERBS), and for those too
    // when a policy file may exist (a redaction resumed below opens the store first).
    // The view parsing (hot.ts) likewise, but only journal (which never reads the head) waits.
    const policyPresent = policyMayExist(ctx.root);
    if (command.name !== "journal" || policyPresent) {
      const store = await import("../engine/store/store.ts");
      if (!ON_DEMAND_VERBS.has(command.name) || policyPresent) await store.loadColdAgreement();
      await store.loadHeadViews();
    }
    try {
      // A `secrets redact` cut short is finished before the next writing verb (redaction_resume.ts).
      // Only a store with a policy file can have one: the redaction modules load only then.
      const resumed = policyPresent
        ? await (await import("./run_policy.ts")).resumeRedactions(
          command.name,
          ctx.root,
          flags["read-only"] === true,
          shareWiring,
        )
        : [];
      const result = await runOnce(command, ctx, flags, positionals);
      const all = resumed.length === 0
        ? result
        : { ...result, stderr: [...resumed, ...(result.stderr ?? [])] };
      // Without a policy file (one listing found none) nothing was redacted: nothing loads.
      if (!policyMayExist(ctx.root)) return all;
      return (await import("./run_policy.ts")).maskRedacted(ctx.root, all);
    } finally {
      shareWiring?.printShareNotices(); // share: refusals noted by engine/share, printed here
    }
  } finally {
    rememberListings(false);
  }
}

/**
 * Runs the verb. When it throws, run_recovery.ts loads: a stop before
 * anything was written because the store needs more (`LoadPending`,
 * `OlderV5FormatPending`, `LegacyRetirementPending`) is handled there and
 * the verb runs again; any other error goes up as it was thrown.
 */
async function runOnce(
  command: Command,
  ctx: CommandContext,
  flags: FlagValues,
  positionals: string[],
): Promise<CommandResult> {
  try {
    return await command.run(ctx, flags, positionals);
  } catch (error) {
    const { runRecovering } = await import("./run_recovery.ts");
    const onDemand = ON_DEMAND_VERBS.has(command.name);
    return await runRecovering({ error }, onDemand, command, ctx, flags, positionals);
  }
}

/**
 * Verbs that write nothing before the points that may throw `LoadPending`
 * (their first `withStore`, and the view check of startRun and propose; get
 * writes nothing at all), so run_recovery.ts `runVerb` may run them once more.
 */
const ON_DEMAND_VERBS: ReadonlySet<string> = new Set(["start", "journal", "propose", "get"]);

/** share_wiring.ts once a verb or store needed it (then kept for the process, as its wiring is). */
let shareWiring: typeof import("./share_wiring.ts") | null = null;

/** share_wiring.ts when a verb or store of this process needed it, else null (nothing is wired). */
export function loadedShareWiring(): typeof import("./share_wiring.ts") | null {
  return shareWiring;
}

/**
 * The verbs that wire team memory whatever the store, and the file that marks
 * a shared store (share_wiring.ts SHARE_VERBS, share_observer.ts
 * REPLICA_FILE; a unit test keeps them equal): without either, wiring would
 * do nothing, so share_wiring.ts stays unloaded.
 */
export const SHARE_WIRED_VERBS: ReadonlySet<string> = new Set(["share", "install"]);
/**
 * Verbs that commit no memory, so team memory's observer never runs for them:
 * even on a shared store they leave engine/share/ unloaded (export and its
 * commit-recovery modules, some 10 ms of a short command's start-up). Were
 * one of them ever to commit, share_observer.ts refuses it rather than skip
 * an export.
 */
export const SHARE_UNWIRED_VERBS: ReadonlySet<string> = new Set([
  "journal",
  "propose",
  "get",
  "search",
  "recall",
]);
/** The replica file's name under `.bimri/` (share_observer.ts REPLICA_FILE). */
export const REPLICA_FILE_NAME = "replica.local.json";

/**
 * False when wiring share for `name` at `root` surely does nothing: the verb
 * commits no memory, or an lstat found no replica file.
 */
export function shareMayBeWired(name: string, root: string): boolean {
  if (SHARE_WIRED_VERBS.has(name)) return true;
  if (SHARE_UNWIRED_VERBS.has(name)) return false;
  try {
    return lstatOrNull(nativePath.join(root, ".bimri", REPLICA_FILE_NAME)) !== null;
  } catch {
    return true; // share_wiring.ts's own check decides
  }
}

/**
 * The owner's policy file's name at the project root (engine/guard/policy.ts
 * POLICY_FILE; a unit test keeps the two equal). Only a store that has one
 * can have redacted secrets, so without it the guard's modules never load.
 */
export const POLICY_FILE_NAME = ".bimri-secrets.json";

/** False only when the project at `root` surely has no policy file (one listing found none). */
function policyMayExist(root: string): boolean {
  return entryMayExist(root, POLICY_FILE_NAME); // the guard's own reader reports what is wrong
}
