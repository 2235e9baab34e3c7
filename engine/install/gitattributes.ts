/**
 * The project's `.gitattributes` block that keeps bimri's memory byte-exact
 * in git: `bimri.md` and everything under `.bimri/` get `-text -eol`, so a
 * checkout with `core.autocrlf=true` (Git for Windows' default) never turns
 * their LF into CRLF and breaks the hashes in state.json. The block is merged
 * like the AGENTS.md block (engine/install/merge.ts): the owner's lines stay.
 */
import { join } from "node:path";
import { BimriError } from "../errors.ts";
import { decodeUtf8Strict, utf8 } from "../model/text.ts";
import {
  atomicReplace,
  createExclusive,
  linkKind,
  linkNoun,
  lstatOrNull,
  readBytesOrNull,
} from "../store/files.ts";
import { type BlockMarkers, mergeMarkedBlock } from "./merge.ts";

/** The file's name in the project root. */
export const GITATTRIBUTES = ".gitattributes";

/** Where the owner's previous `.gitattributes` is kept, in the install's backup or receipt folder. */
export const GITATTRIBUTES_BACKUP = "gitattributes.before";

/** `.gitattributes` comment lines around bimri's block. */
export const GITATTRIBUTES_MARKERS: BlockMarkers = {
  start: "# BIMRI:START",
  end: "# BIMRI:END",
};

/** The lines bimri manages: its memory files are never converted by git. */
export const GITATTRIBUTES_BLOCK = [
  "# bimri memory is hashed byte for byte: git must never convert its line endings.",
  "bimri.md -text -eol",
  ".bimri/** -text -eol",
].join("\n");

/** The merged `.gitattributes` text for the file's exact `existing` text (null when missing). */
export function gitattributesText(existing: string | null): string {
  return mergeMarkedBlock(existing, GITATTRIBUTES_BLOCK, "", GITATTRIBUTES_MARKERS);
}

function readExisting(target: string): { bytes: Uint8Array | null; text: string | null } {
  const path = join(target, GITATTRIBUTES);
  const info = lstatOrNull(path);
  if (info === null) return { bytes: null, text: null };
  if (info.isSymlink || !info.isFile) {
    const what = info.isSymlink ? linkNoun(linkKind(path)) : "not a regular file";
    throw new BimriError(
      "store-unsafe",
      `refusing to write through ${GITATTRIBUTES}: it is ${what}. Replace it with a regular file (or remove it), then install again; nothing was changed.`,
    );
  }
  const bytes = readBytesOrNull(path);
  const text = bytes === null ? null : decodeUtf8Strict(bytes);
  if (bytes !== null && text === null) {
    throw new BimriError(
      "store-unsafe",
      `${GITATTRIBUTES} is not valid UTF-8, so the BIMRI block cannot be merged safely; fix or move the file, then install again. Nothing was changed.`,
    );
  }
  return { bytes, text };
}

/** Refuses a `.gitattributes` the installer could not merge (call before the first write). */
export function validateGitattributes(target: string): void {
  readExisting(target);
}

/**
 * Merges bimri's block into `<target>/.gitattributes` when it is missing or
 * stale. The owner's previous bytes are first kept, exclusively created, as
 * `<backupDir>/gitattributes.before`. Returns true when the file was written.
 */
export function writeGitattributes(target: string, backupDir: string): boolean {
  const { bytes, text } = readExisting(target);
  const merged = gitattributesText(text);
  if (text === merged) return false;
  if (bytes !== null && !createExclusive(join(backupDir, GITATTRIBUTES_BACKUP), bytes)) {
    throw new BimriError(
      "io",
      `${GITATTRIBUTES_BACKUP} already exists in ${backupDir}; ${GITATTRIBUTES} was left as it was. Add the BIMRI block by hand:\n${
        gitattributesText(null)
      }`,
    );
  }
  try {
    atomicReplace(join(target, GITATTRIBUTES), utf8(merged));
  } catch (error) {
    const cause = error instanceof Error ? error.message : String(error);
    throw new BimriError(
      "io",
      `bimri is installed, but ${GITATTRIBUTES} could not be written (${cause}); it was left as it was${
        bytes === null ? "" : ` (a copy is in ${backupDir})`
      }. Add the BIMRI block by hand, or run install again:\n${gitattributesText(null)}`,
    );
  }
  return true;
}
