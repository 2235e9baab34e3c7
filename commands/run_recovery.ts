/**
 * The rare stops of a verb before it wrote anything, handled for
 * commands/run.ts: a module its store needs loads and the verb runs again
 * (`LoadPending`); a writer that finds an older v5 state upgrades it first,
 * as the reference's loader does (`OlderV5FormatPending`); and a writer that
 * finds old root files a v1-v3 migration claims but never retired (the
 * migration was cut short once its state was durable) finishes the
 * retirement, as the reference finishes it when it loads the store
 * (`LegacyRetirementPending`). The converters load only then.
 */
import { LegacyRetirementPending, unclaimedLegacyRootsError } from "../engine/store/legacy_root.ts";
import { loadColdAgreement, LoadPending, OlderV5FormatPending } from "../engine/store/store.ts";
import type { Command, CommandContext, CommandResult, FlagValues } from "./command.ts";

/** What the verb's first run threw (commands/run.ts), wrapped so any thrown value fits. */
export type FirstStop = { error: unknown };

/** The verb to run again and what it was given; `onDemand`: see runRecovering. */
type VerbCall = {
  command: Command;
  ctx: CommandContext;
  flags: FlagValues;
  positionals: string[];
  onDemand: boolean;
};

/**
 * Goes on from a first run of `command` that threw `first.error`: any error
 * but the three stops above is thrown again as it is; a stop goes on exactly
 * as the upgrade, retirement and on-demand loading around that run would
 * have gone on, and returns the verb's result or throws its error.
 * `onDemand`: the verb may run again after a `LoadPending` (run.ts ON_DEMAND_VERBS).
 */
export function runRecovering(
  first: FirstStop,
  onDemand: boolean,
  command: Command,
  ctx: CommandContext,
  flags: FlagValues,
  positionals: string[],
): Promise<CommandResult> {
  const { error } = first;
  if (
    !(error instanceof LoadPending || error instanceof OlderV5FormatPending ||
      error instanceof LegacyRetirementPending)
  ) throw error;
  return runUpgrading({ command, ctx, flags, positionals, onDemand }, first);
}

/**
 * Runs `command`, upgrading an older v5 state first when the verb needs it.
 * `first`: what the verb's first run threw.
 */
async function runUpgrading(
  call: VerbCall,
  first?: FirstStop,
): Promise<CommandResult> {
  let upgrade: string[] = [];
  try {
    return await runFinishingRetirement(call, first);
  } catch (error) {
    if (!(error instanceof OlderV5FormatPending)) throw error;
    // As the reference's loader: a writer first brings an older v5 state to
    // 5.1.0, by the same upgrade `migrate` performs, then runs.
    await loadColdAgreement();
    const { upgradeV50State } = await import("../engine/migrate/v50.ts");
    upgrade = upgradeV50State(call.ctx.root, error.version);
  }
  const result = await runFinishingRetirement(call);
  return { ...result, stderr: [...upgrade, ...(result.stderr ?? [])] };
}

/**
 * Runs `command`, finishing a pending v1-v3 retirement first when the verb
 * needs it. `first`: what the verb's first run threw.
 */
async function runFinishingRetirement(
  call: VerbCall,
  first?: FirstStop,
): Promise<CommandResult> {
  try {
    return await runVerb(call, first);
  } catch (error) {
    if (!(error instanceof LegacyRetirementPending)) throw error;
    await loadColdAgreement();
    const { finishLegacyRetirement } = await import("../engine/migrate/legacy.ts");
    finishLegacyRetirement(call.ctx.root);
  }
  try {
    return await runVerb(call);
  } catch (error) {
    // What is still there is not the migration's to retire.
    if (error instanceof LegacyRetirementPending) throw unclaimedLegacyRootsError(error.files);
    throw error;
  }
}

/**
 * Runs the verb; when its store needs a module the verb loads on demand
 * (`LoadPending`: a foreign state.json with cold records, a bimri.md that
 * differs from the head), that module loads and the verb, stopped before it
 * wrote anything, runs once more if it is `onDemand` (see runRecovering).
 * `first`: what its first run threw.
 */
async function runVerb(
  call: VerbCall,
  first?: FirstStop,
): Promise<CommandResult> {
  for (let attempt = 0;; attempt++) {
    try {
      if (attempt === 0 && first !== undefined) throw first.error;
      return await call.command.run(call.ctx, call.flags, call.positionals);
    } catch (error) {
      // Each module loads once, so a verb stops at most once per module.
      if (!(error instanceof LoadPending) || attempt >= 3) throw error;
      // sync and close run themselves again (store.ts runLoadingOnDemand), team memory's
      // idle check (share_wiring.ts) included.
      if (!call.onDemand) throw error;
      await error.load();
    }
  }
}
