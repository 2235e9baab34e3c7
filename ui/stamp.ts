/**
 * The store's change stamp: a cheap fingerprint (a few lstat calls and one
 * read of state.json) that changes whenever a command changes what the
 * console shows, so open pages refresh themselves without re-reading memory.
 */
import { join } from "../engine/store/os_path.ts";
import { StorePaths } from "../engine/store/paths.ts";
import { REPLICA_ID } from "../engine/share/ids.ts";

function print(path: string): string {
  try {
    const info = Deno.lstatSync(path);
    return `${info.mtime?.getTime() ?? 0}:${info.size}:${info.ino ?? 0}`;
  } catch {
    return "-";
  }
}

/** Folders whose listing changes when a record is added. */
const FOLDERS = ["proposals", "decisions", "conflicts", "resolutions", "log", "archive"];

/** The change stamp of the store at `root`. */
export function changeStamp(root: string): string {
  const paths = new StorePaths(root);
  const parts = [print(paths.state), print(paths.view)];
  for (const folder of FOLDERS) parts.push(print(paths.folder(folder)));
  // Team memory: a git pull that adds a replica changes .bimri-share/ itself;
  // one that adds a record or a key changes that replica's folder. Only the
  // replicas the bookkeeping knows are looked at (never a listing a hostile
  // repository could make huge); the owner's decisions change the trust file.
  parts.push(print(join(paths.dir, "share-trust.local.json")));
  const share = join(root, ".bimri-share");
  parts.push(print(share));
  for (const replica of knownReplicas(paths)) {
    parts.push(`${replica}:${print(join(share, replica))}`);
  }
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

/** This replica and the replicas it has imported from (`.bimri/share.local.json`), none when not shared. */
function knownReplicas(paths: StorePaths): string[] {
  try {
    const raw = JSON.parse(Deno.readTextFileSync(join(paths.dir, "share.local.json")));
    const vector = raw !== null && typeof raw.vector === "object" && raw.vector !== null
      ? Object.keys(raw.vector)
      : [];
    const own = typeof raw?.replica === "string" ? [raw.replica] : [];
    return [...own, ...vector].filter((r) => REPLICA_ID.test(r)).sort();
  } catch {
    return [];
  }
}
