/**
 * The cheap checks of memory text that need no credential rules: the
 * characters memory text may never hold, and the first pass that tells text
 * that cannot hold a credential apart (credentials.ts holds the rules).
 */
import { BimriError } from "../errors.ts";
import { refusedTextCharacter } from "./visible.ts";

// A cheap first pass: text without any of these cannot match a rule.
const TRIGGER =
  /PRIVATE KEY|sk-|gh[pousr]_|github_pat_|gl[a-z]{1,5}-|GR1348941|npm_|pypi-|xox|xapp-|hooks\.slack|_live_|_test_|AIza|Key=|Signature=|AKIA|ASIA|ABIA|ACCA|A3T|eyJ|:\/\/[^\s]*@|pass|pwd|secret|key|token|credential/i;

/** False when `text` surely holds nothing a credential rule matches (most text). */
export function mayHoldCredential(text: string): boolean {
  return TRIGGER.test(text);
}

/**
 * Refuses memory text that holds a character memory text may never hold
 * (bidi controls, zero-width characters, C1 controls, DEL); `name` says
 * which text ("journal text").
 */
export function refuseHiddenCharacter(value: string, name: string): void {
  const hidden = refusedTextCharacter(value);
  if (hidden !== null) {
    throw new BimriError(
      "invalid-input",
      `${name} contains the invisible or direction-changing character ${hidden.escape} ` +
        `at character ${hidden.offset}; remove it and write the text again (memory text ` +
        `refuses bidi controls, zero-width characters, C1 controls and DEL, which can hide ` +
        `or reorder what a reader sees).`,
    );
  }
}

/**
 * What a writer screens its memory text with (run_input.ts `loadTextScreen`
 * builds it): refusals of a hidden character or a credential the owner's
 * policy does not allow; `name` says which text.
 */
export type TextScreen = {
  /** Refuses a hidden character or a credential in `value`. */
  refuseUnsafe(value: string, name: string): void;
  /** Refuses a credential in `value`. */
  refuseCredentials(value: string, name: string): void;
};
