/**
 * One folder is one replica however its path is spelled: the store path a
 * replica ID was minted for is compared with the current one as a place
 * (same file-system object, or the same real path, case-folded where the
 * file system is case-insensitive), not as a string. A genuinely copied or
 * moved folder is another place and still takes a new ID.
 */

/** Operating systems whose default file systems ignore letter case. */
const CASE_INSENSITIVE = new Set(["windows", "darwin"]);

/**
 * The comparable spelling of an absolute path on `os` (pure): Windows
 * separators, long-path and UNC prefixes, drive letter and case folded;
 * macOS case and Unicode form folded; other systems unchanged but for a
 * trailing separator.
 */
export function placeKey(path: string, os: string): string {
  let p = path;
  if (os === "windows") {
    p = p.replaceAll("/", "\\");
    if (p.startsWith("\\\\?\\UNC\\")) p = "\\\\" + p.slice(8);
    else if (p.startsWith("\\\\?\\")) p = p.slice(4);
    while (p.length > 3 && p.endsWith("\\")) p = p.slice(0, -1);
  } else {
    while (p.length > 1 && p.endsWith("/")) p = p.slice(0, -1);
  }
  if (CASE_INSENSITIVE.has(os)) p = p.normalize("NFC").toLowerCase();
  return p;
}

/** The real path of `path`, or null when it does not exist (a folder moved away). */
function realOrNull(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}

/** The file-system identity of `path` (device and inode), when the platform gives one. */
function identity(path: string): string | null {
  try {
    const info = Deno.statSync(path);
    return info.ino === null || info.dev === null ? null : `${info.dev}:${info.ino}`;
  } catch {
    return null;
  }
}

/**
 * True when `recorded` (the path a replica ID was minted for) and `current`
 * name the same folder on this machine. Equal strings cost nothing; other
 * spellings are resolved (real path, then case folding, then identity).
 */
export function samePlace(recorded: string, current: string, os: string = Deno.build.os): boolean {
  // bimri records an absolute path: a relative one ("." resolves wherever the
  // command runs) can only come from a file someone else wrote, so it never matches.
  if (!isAbsoluteOn(recorded, os)) return false;
  if (recorded === current) return true;
  if (placeKey(recorded, os) === placeKey(current, os)) return true;
  const a = realOrNull(recorded);
  const b = realOrNull(current);
  if (a === null || b === null) return false;
  if (placeKey(a, os) === placeKey(b, os)) return true;
  const idA = identity(a);
  return idA !== null && idA === identity(b);
}

/** True when `path` is absolute on `os` (a drive or UNC path on Windows, `/...` elsewhere). */
function isAbsoluteOn(path: string, os: string): boolean {
  return os === "windows" ? /^(?:[A-Za-z]:[\\/]|[\\/]{2})/.test(path) : path.startsWith("/");
}
