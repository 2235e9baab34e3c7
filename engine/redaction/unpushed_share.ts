/**
 * The share records of this clone that git has not carried anywhere yet,
 * rewritten by `secrets redact` with the secret replaced by its marker and
 * signed again with this clone's key. "Not yet pushed" means: the record file
 * is in this clone's own replica folder and no commit reachable from a
 * remote-tracking ref (`git log --remotes`) touches it, so no other clone
 * can hold it. When git cannot answer, a record counts as pushed and keeps
 * the pushed route (masked, the owner told to rewrite history and rotate).
 */
import { join } from "node:path";
import { redactText } from "../model/credentials.ts";
import { mapStrings } from "../model/json.ts";
import { atomicReplace, readBytesOrNull } from "../store/files.ts";
import type { Store } from "../store/store.ts";
import { keptFolder } from "../share/keep.ts";
import { parseRecordBytes, recordHash, recordText, type ShareRecord } from "../share/record.ts";
import { signRecordHash } from "../share/sign.ts";
import { loadShare, SHARE_FOLDER } from "../share/state.ts";
import { recordName } from "../share/ids.ts";

/** One own unpushed record to rewrite: its file (project-relative), bytes before and after. */
export type ShareRewrite = {
  file: string;
  path: string;
  before: Uint8Array;
  after: string;
  /** The copy this clone keeps under .bimri/share-sent/ (rewritten too when it exists). */
  kept: string;
};

/** Whether `file` is in a commit a remote-tracking ref reaches (true when git cannot tell). */
function pushed(root: string, file: string): boolean {
  try {
    const out = new Deno.Command("git", {
      args: ["log", "--remotes", "-1", "--format=%H", "--", file],
      cwd: root,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    if (!out.success) return true;
    return new TextDecoder().decode(out.stdout).trim() !== "";
  } catch {
    return true;
  }
}

/**
 * Plans the rewrite of every file in `files` (project-relative, where the
 * scan found the secret) that is an own record of this clone not yet pushed;
 * `only` maps the fingerprint to its kind. Reads only.
 */
export function planUnpushedShareRewrites(
  store: Store,
  files: readonly string[],
  only: ReadonlyMap<string, string>,
): ShareRewrite[] {
  const candidates = files.filter((file) => file.startsWith(`${SHARE_FOLDER}/`));
  if (candidates.length === 0) return [];
  const ctx = loadShare(store.paths, true);
  if (ctx === null) return [];
  const root = store.paths.root;
  const replica = ctx.state.replica;
  const rewrites: ShareRewrite[] = [];
  for (const file of candidates) {
    const match = new RegExp(`^${SHARE_FOLDER}/${replica}/([0-9]+)\\.json$`).exec(file);
    if (match === null) continue;
    const seq = Number(match[1]);
    if (recordName(seq) !== `${match[1]}.json` || pushed(root, file)) continue;
    const path = join(root, file);
    const before = readBytesOrNull(path);
    if (before === null) continue;
    let record: ShareRecord;
    try {
      record = parseRecordBytes(before, replica, seq);
    } catch {
      continue; // damaged: share's own checks report it
    }
    const { signature: _old, ...unsigned } = record;
    const masked = mapStrings(unsigned, (text) => redactText(text, only)) as ShareRecord;
    masked.signature = signRecordHash(ctx, recordHash(masked));
    const after = recordText(masked);
    if (after === new TextDecoder().decode(before)) continue;
    rewrites.push({ file, path, before, after, kept: join(keptFolder(ctx), recordName(seq)) });
  }
  return rewrites;
}

/**
 * Writes one planned rewrite, each file by atomic replace: the kept copy
 * first, then the record, so a run cut short in between still finds the
 * record holding the secret and plans it again.
 */
export function applyShareRewrite(rewrite: ShareRewrite): void {
  if (readBytesOrNull(rewrite.kept) !== null) atomicReplace(rewrite.kept, rewrite.after);
  atomicReplace(rewrite.path, rewrite.after);
}
