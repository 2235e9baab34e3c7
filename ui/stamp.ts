/**
 * The store's change stamp: a cheap fingerprint (a few lstat calls and one
 * read of state.json) that changes whenever a command changes what the
 * console shows, so open pages refresh themselves without re-reading memory.
 */
import { join } from "../engine/store/os_path.ts";
import { StorePaths } from "../engine/store/paths.ts";

function print(path: string): string {
  try {
    const info = Deno.lstatSync(path);
    return `${info.mtime?.getTime() ?? 0}:${info.size}:${info.ino ?? 0}`;
  } catch {
    return "-";
  }
}

/** Replica folders whose listings the stamp follows (a hostile repository may hold thousands). */
const SHARE_FOLDERS_STAMPED = 64;

/** Folders whose listing changes when a record is added. */
const FOLDERS = ["proposals", "decisions", "conflicts", "resolutions", "log", "archive"];

/** The change stamp of the store at `root`. */
export function changeStamp(root: string): string {
  const paths = new StorePaths(root);
  const parts = [print(paths.state), print(paths.view)];
  for (const folder of FOLDERS) parts.push(print(paths.folder(folder)));
  // Team memory: a git pull that adds a replica, a record or a key changes a
  // replica folder; the owner's trust decisions change the trust file.
  parts.push(print(join(paths.dir, "share-trust.local.json")));
  const share = join(root, ".bimri-share");
  parts.push(print(share));
  try {
    let seen = 0;
    // Never through a link: a linked .bimri-share is refused wherever it is read.
    if (!Deno.lstatSync(share).isDirectory) throw new Error("not a folder");
    for (const entry of Deno.readDirSync(share)) {
      if (!entry.isDirectory || ++seen > SHARE_FOLDERS_STAMPED) break;
      parts.push(`${entry.name}:${print(join(share, entry.name))}`);
    }
  } catch { /* not shared */ }
  // A journal line appends to an active run's log without adding a file.
  try {
    const state = JSON.parse(Deno.readTextFileSync(paths.state)) as { active_runs?: unknown };
    const active = state.active_runs;
    if (active !== null && typeof active === "object") {
      for (const run of Object.keys(active).sort()) {
        if (/^R[0-9]{6}$/.test(run)) parts.push(print(paths.log(run)));
      }
    }
  } catch {
    parts.push("unreadable");
  }
  let h = 2166136261;
  const text = parts.join("|");
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}
