/**
 * The credential and hidden-character screen of a shared record before
 * `share pull` imports it: every string the record holds is checked, and a
 * record holding a credential or a character memory text refuses is turned
 * into a refused-file problem, so nothing of it enters memory.
 */
import { credentialKindName, findCredentials } from "../model/credentials.ts";
import { refusedTextCharacter } from "../model/visible.ts";
import { secretPolicy } from "./policy.ts";
import { recordStrings } from "./publish_screen.ts";

/** A refused file, as the share scan reports it. */
export type ScreenProblem = { file: string; message: string };

/**
 * `read` unchanged, or a problem naming the credential (masked, with its
 * fingerprint) or hidden character it holds; `root` is the project root
 * whose policy applies. `R` is the share record type (any object: the guard
 * room does not import share/).
 */
export function screenRecord<R extends object, P extends ScreenProblem>(
  root: string,
  file: string,
  read: R | P,
): R | P | ScreenProblem {
  if ("message" in read) return read;
  const policy = secretPolicy(root);
  for (const text of recordStrings(read)) {
    const hidden = refusedTextCharacter(text);
    if (hidden !== null) {
      return {
        file,
        message: `holds the invisible or direction-changing character ${hidden.escape}, ` +
          `which memory text refuses`,
      };
    }
    const [found] = findCredentials(text, policy);
    if (found !== undefined) {
      return {
        file,
        message: `holds what looks like ${credentialKindName(found.kind)} (${found.kind}): ` +
          `${found.masked}, fingerprint ${found.fingerprint}; ask its author to rotate the ` +
          `credential and rewrite the record without it`,
      };
    }
  }
  return read;
}
