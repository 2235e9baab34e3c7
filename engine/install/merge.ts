/**
 * The marked-block merge for AGENTS.md, CLAUDE.md and .gitattributes. Only text between a
 * start marker and the first end marker after it, with no other start marker
 * in between, belongs to bimri; everything else is the owner's and stays
 * byte for byte, including a stray start marker in their own prose.
 */
import { pyRstrip, pyStrip } from "../model/text.ts";

/** First line of a bimri-managed block. */
export const BLOCK_START = "<!-- BIMRI:START -->";
/** Last line of a bimri-managed block. */
export const BLOCK_END = "<!-- BIMRI:END -->";

/** The start and end lines of a bimri-managed block in one kind of file. */
export type BlockMarkers = { start: string; end: string };

/** The markers of AGENTS.md and CLAUDE.md (Markdown comments). */
export const MARKDOWN_MARKERS: BlockMarkers = { start: BLOCK_START, end: BLOCK_END };

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// Lazy span that may not cross another start marker: an orphan start marker in
// owner prose can never anchor the match, so only a real block is replaced.
function blockPattern(markers: BlockMarkers): RegExp {
  const start = escapeRegExp(markers.start);
  return new RegExp(`${start}(?:(?!${start})[\\s\\S])*?${escapeRegExp(markers.end)}`, "g");
}

/** `block` wrapped in its markers (block text trimmed, no trailing newline). */
export function markedBlock(block: string, markers: BlockMarkers = MARKDOWN_MARKERS): string {
  return `${markers.start}\n${pyStrip(block)}\n${markers.end}`;
}

/** True when `text` already holds at least one complete marked block. */
export function hasMarkedBlock(text: string, markers: BlockMarkers = MARKDOWN_MARKERS): boolean {
  return blockPattern(markers).test(text);
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
 * appended after the existing text (or after `preamble` for a new file);
 * `markers` name the block's first and last lines (Markdown comments unless
 * given). Like
 * the reference, a leading byte-order mark stays and line endings become LF.
 * The result always ends with exactly one newline.
 */
export function mergeMarkedBlock(
  existing: string | null,
  block: string,
  preamble = "",
  markers: BlockMarkers = MARKDOWN_MARKERS,
): string {
  const marked = markedBlock(block, markers);
  const current = existing === null ? preamble : universalNewlines(existing);
  let updated: string;
  if (hasMarkedBlock(current, markers)) {
    updated = current.replace(blockPattern(markers), () => marked);
  } else {
    updated = pyRstrip(current) + (pyStrip(current) ? "\n\n" : "") + marked + "\n";
  }
  return pyRstrip(updated) + "\n";
}
