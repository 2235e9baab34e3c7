/**
 * Checks of what run verbs are given: an active run handle, an importance
 * and the screen of their memory text. Kept apart so `journal` loads only these.
 */
import { BimriError } from "../errors.ts";
import { requireRunId } from "../model/ids.ts";
import type { State } from "../model/state.ts";
import { mayHoldCredential, refuseHiddenCharacter, type TextScreen } from "../model/unsafe_text.ts";
import { entryMayExist } from "../store/files.ts";

/** Refuses unless `run` is a well-formed handle of an active run. */
export function requireActiveRun(state: State, runInput: string): string {
  const run = requireRunId(runInput);
  if (!state.active_runs[run]) throw new BimriError("unknown-run", `${run} is not an active run.`);
  return run;
}

/** Validates an importance value 1-5 (strings from the CLI accepted). */
export function parseImportance(value: string | number | undefined, fallback = 3): number {
  if (value === undefined) return fallback;
  const n = typeof value === "number" ? value : Number(value);
  if (
    !Number.isInteger(n) || n < 1 || n > 5 ||
    (typeof value === "string" && !/^[0-9]+$/.test(value.trim()))
  ) {
    throw new BimriError("invalid-input", "importance must be 1 through 5.");
  }
  return n;
}

/** The screen of a writer whose texts hold no credential trigger, in a project without a policy file. */
const LIGHT_SCREEN: TextScreen = {
  refuseUnsafe(value, name) {
    refuseHiddenCharacter(value, name);
    requireScreenedInput(value);
  },
  refuseCredentials: requireScreenedInput,
};

function requireScreenedInput(value: string): void {
  // loadTextScreen was given every text the command screens (or a part of one).
  if (mayHoldCredential(value)) throw new Error("internal: text screened without the guard");
}

/**
 * The screen for a writer's memory `texts` (the values it was given, each
 * checked later as given or trimmed) in the project at `root`. The credential
 * rules and the owner's policy (credentials.ts, policy.ts) load only when a
 * text could hold a credential or a policy file exists; otherwise no rule
 * could match and only the hidden characters are checked. `readNow`: see
 * policy.ts `textScreenOf`.
 */
export async function loadTextScreen(
  root: string,
  texts: readonly (string | undefined)[],
  readNow = false,
): Promise<TextScreen> {
  if (!policyFileMayExist(root) && !texts.some((t) => t !== undefined && mayHoldCredential(t))) {
    return LIGHT_SCREEN;
  }
  const { textScreenOf } = await import("../guard/policy.ts");
  return textScreenOf(root, readNow);
}

/** False only when `root` surely holds no `.bimri-secrets.json` (policy.ts POLICY_FILE). */
function policyFileMayExist(root: string): boolean {
  return entryMayExist(root, ".bimri-secrets.json"); // the policy reader reports what is wrong
}
