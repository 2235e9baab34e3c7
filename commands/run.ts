/**
 * Runs one verb for the CLI and the MCP server. A writer that finds old root
 * files a v1-v3 migration claims but never retired (the migration was cut
 * short once its state was durable) refuses before writing; the retirement
 * is finished here, as the reference finishes it when it loads the store, and
 * the verb runs once more. The converter that proves the migration record
 * loads only then.
 */
import { LegacyRetirementPending, unclaimedLegacyRootsError } from "../engine/store/legacy_root.ts";
import {
  loadColdAgreement,
  loadHeadViews,
  LoadPending,
  OlderV5FormatPending,
} from "../engine/store/store.ts";
import type { Command, CommandContext, CommandResult, FlagValues } from "./command.ts";
import { mapStrings } from "../engine/model/json.ts";
import { entryMayExist, lstatOrNull } from "../engine/store/files.ts";
import { StorePaths } from "../engine/store/paths.ts";

/** Runs `command`, finishing a pending v1-v3 retirement first when the verb needs it. */
export async function runCommand(
  command: Command,
  ctx: CommandContext,
  flags: FlagValues,
  positionals: string[],
): Promise<CommandResult> {
  // Team memory joins the write path only for a store that is shared (share_wiring.ts);
  // for any other store (one lstat) its wiring module is not even loaded.
  if (shareWiring === null && shareMayBeWired(command.name, ctx.root)) {
    shareWiring = await import("./share_wiring.ts");
  }
  await shareWiring?.wireShareFor(
    command.name,
    ctx.root,
    typeof flags.run === "string" ? flags.run : undefined,
  );
  // The check of a foreign state.json's cold records (store.ts) loads up front for
  // every verb but those that load it on demand (runVerb), and for those too
  // when a policy file may exist (a redaction resumed below opens the store first).
  const policyPresent = policyMayExist(ctx.root);
  if (!ON_DEMAND_VERBS.has(command.name) || policyPresent) await loadColdAgreement();
  // The view parsing (hot.ts) likewise, but only journal (which never reads the head) waits.
  if (command.name !== "journal" || policyPresent) await loadHeadViews();
  try {
    // A `secrets redact` cut short is finished before the next writing verb (redaction_resume.ts).
    // Only a store with a policy file can have one: the redaction modules load only then.
    const resumed = policyPresent
      ? await resumeRedactions(command.name, ctx.root, flags["read-only"] === true)
      : [];
    const result = await runUpgrading(command, ctx, flags, positionals);
    return await maskRedacted(
      ctx.root,
      resumed.length === 0 ? result : { ...result, stderr: [...resumed, ...(result.stderr ?? [])] },
    );
  } finally {
    shareWiring?.printShareNotices(); // share: refusals noted by engine/share, printed here
  }
}

/**
 * Finishes a `secrets redact` cut short (redaction_resume.ts). On a shared
 * store whose verb wired only team memory's idle check, the redaction's own
 * commit needs the export: it stops as a crash would (the redaction resumes
 * from any durable step), the export loads, and it resumes once more.
 */
async function resumeRedactions(name: string, root: string, readOnly: boolean): Promise<string[]> {
  const { finishPendingRedactions } = await import("./redaction_resume.ts");
  try {
    return finishPendingRedactions(name, root, readOnly);
  } catch (error) {
    if (shareWiring === null || !(error instanceof shareWiring.ShareExportPending)) throw error;
    await error.load();
    return finishPendingRedactions(name, root, readOnly);
  }
}

/**
 * Verbs that write nothing before the points that may throw `LoadPending`
 * (their first `withStore`, and the view check of startRun and propose; get
 * writes nothing at all), so `runVerb` may run them once more.
 */
const ON_DEMAND_VERBS: ReadonlySet<string> = new Set(["start", "journal", "propose", "get"]);

/**
 * Runs the verb; when its store needs a module the verb loads on demand
 * (`LoadPending`: a foreign state.json with cold records, a bimri.md that
 * differs from the head), that module loads and the verb, stopped before it
 * wrote anything, runs once more.
 */
async function runVerb(
  command: Command,
  ctx: CommandContext,
  flags: FlagValues,
  positionals: string[],
): Promise<CommandResult> {
  for (let attempt = 0;; attempt++) {
    try {
      return await command.run(ctx, flags, positionals);
    } catch (error) {
      // Each module loads once, so a verb stops at most once per module.
      if (!(error instanceof LoadPending) || attempt >= 3) throw error;
      // sync and close run themselves again (store.ts runLoadingOnDemand), team memory's
      // idle check (share_wiring.ts) included.
      if (!ON_DEMAND_VERBS.has(command.name)) throw error;
      await error.load();
    }
  }
}

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
    return lstatOrNull(new StorePaths(root).folder(REPLICA_FILE_NAME)) !== null;
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

/** Runs `command`, upgrading an older v5 state first when the verb needs it. */
async function runUpgrading(
  command: Command,
  ctx: CommandContext,
  flags: FlagValues,
  positionals: string[],
): Promise<CommandResult> {
  let upgrade: string[] = [];
  try {
    return await runFinishingRetirement(command, ctx, flags, positionals);
  } catch (error) {
    if (!(error instanceof OlderV5FormatPending)) throw error;
    // As the reference's loader: a writer first brings an older v5 state to
    // 5.1.0, by the same upgrade `migrate` performs, then runs.
    await loadColdAgreement();
    const { upgradeV50State } = await import("../engine/migrate/v50.ts");
    upgrade = upgradeV50State(ctx.root, error.version);
  }
  const result = await runFinishingRetirement(command, ctx, flags, positionals);
  return { ...result, stderr: [...upgrade, ...(result.stderr ?? [])] };
}

/** Runs `command`, finishing a pending v1-v3 retirement first when the verb needs it. */
async function runFinishingRetirement(
  command: Command,
  ctx: CommandContext,
  flags: FlagValues,
  positionals: string[],
): Promise<CommandResult> {
  try {
    return await runVerb(command, ctx, flags, positionals);
  } catch (error) {
    if (!(error instanceof LegacyRetirementPending)) throw error;
    await loadColdAgreement();
    const { finishLegacyRetirement } = await import("../engine/migrate/legacy.ts");
    finishLegacyRetirement(ctx.root);
  }
  try {
    return await runVerb(command, ctx, flags, positionals);
  } catch (error) {
    // What is still there is not the migration's to retire.
    if (error instanceof LegacyRetirementPending) throw unclaimedLegacyRootsError(error.files);
    throw error;
  }
}

/**
 * `result` with every secret the owner redacted (`secrets redact`) replaced
 * by its marker, in text, stderr and JSON alike; unchanged (and free) when
 * nothing was redacted (no policy file: nothing loaded, one lstat).
 */
async function maskRedacted(root: string, result: CommandResult): Promise<CommandResult> {
  if (!policyMayExist(root)) return result;
  const [{ secretPolicy }, { redactText }] = await Promise.all([
    import("../engine/guard/policy.ts"),
    import("../engine/model/credentials.ts"),
  ]);
  let redacted: ReadonlyMap<string, string> | undefined;
  try {
    redacted = secretPolicy(root).redacted;
  } catch {
    return result; // a malformed policy is reported by the commands that read it
  }
  if (redacted === undefined || redacted.size === 0) return result;
  const mask = (text: string) => redactText(text, redacted);
  return {
    ...result,
    text: mask(result.text),
    stderr: result.stderr?.map(mask),
    data: mapStrings(result.data, mask) as Record<string, unknown>,
    jsonText: result.jsonText === undefined ? undefined : mask(result.jsonText),
  };
}

/** False only when the project at `root` surely has no policy file (one listing found none). */
function policyMayExist(root: string): boolean {
  return entryMayExist(root, POLICY_FILE_NAME); // the guard's own reader reports what is wrong
}
