/**
 * The marked-block merge for AGENTS.md and CLAUDE.md. Only text between a
 * start marker and the first end marker after it, with no other start marker
 * in between, belongs to bimri; everything else is the owner's and stays
 * byte for byte, including a stray start marker in their own prose.
 */
import { pyRstrip, pyStrip } from "../model/text.ts";

/** First line of a bimri-managed block. */
export const BLOCK_START = "<!-- BIMRI:START -->";
/** Last line of a bimri-managed block. */
export const BLOCK_END = "<!-- BIMRI:END -->";

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// Lazy span that may not cross another START: an orphan start marker in owner
// prose can never anchor the match, so only a real block is replaced.
const BLOCK_PATTERN = new RegExp(
  `${escapeRegExp(BLOCK_START)}(?:(?!${escapeRegExp(BLOCK_START)})[\\s\\S])*?${
    escapeRegExp(BLOCK_END)
  }`,
  "g",
);

/** `block` wrapped in its markers (block text trimmed, no trailing newline). */
export function markedBlock(block: string): string {
  return `${BLOCK_START}\n${pyStrip(block)}\n${BLOCK_END}`;
}

/** True when `text` already holds at least one complete marked block. */
export function hasMarkedBlock(text: string): boolean {
  BLOCK_PATTERN.lastIndex = 0;
  const found = BLOCK_PATTERN.test(text);
  BLOCK_PATTERN.lastIndex = 0;
  return found;
}

/**
 * `text` with its line endings as the reference engine reads an owner file:
 * Python's universal-newline mode turns CRLF and a lone CR into LF (and no
 * other break), so the merged file has LF endings throughout.
 */
export function universalNewlines(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

/**
 * The merged file text for the file's exact `existing` text (null when the
 * file is missing): every complete block replaced by the new one, or the block
 * appended after the existing text (or after `preamble` for a new file). Like
 * the reference, a leading byte-order mark stays and line endings become LF.
 * The result always ends with exactly one newline.
 */
export function mergeMarkedBlock(existing: string | null, block: string, preamble = ""): string {
  const marked = markedBlock(block);
  const current = existing === null ? preamble : universalNewlines(existing);
  let updated: string;
  if (hasMarkedBlock(current)) {
    updated = current.replace(BLOCK_PATTERN, () => marked);
  } else {
    updated = pyRstrip(current) + (pyStrip(current) ? "\n\n" : "") + marked + "\n";
  }
  return pyRstrip(updated) + "\n";
}
