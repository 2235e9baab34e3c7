/**
 * The few path operations the everyday commands need (join, dirname,
 * resolve), for POSIX and Windows. node:path would do, but importing any
 * `node:` module costs a short-lived CLI process about 25-40 ms of start-up,
 * more than the whole of a journal entry; these match node:path's results on
 * the paths bimri builds (a unit test compares them on a corpus).
 */

/** A path flavour: the separator and the operations root resolution and store paths use. */
export type PathFlavor = {
  /** Path separator of the flavour. */
  readonly sep: string;
  /** Resolves segments to an absolute path (relative to the process cwd when none is absolute). */
  resolve(...segments: string[]): string;
  /** Parent folder (the root is its own parent). */
  dirname(path: string): string;
  /** Joins segments with the flavour's separator and normalizes the result. */
  join(...segments: string[]): string;
};

/** Collapses `.`, `..` and repeated separators in `/`-separated `tail`; `..` above an absolute root is dropped. */
function collapse(tail: string, absolute: boolean): string {
  const out: string[] = [];
  for (const part of tail.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
      continue;
    }
    out.push(part);
  }
  return out.join("/");
}

function posixNormalize(path: string): string {
  if (path === "") return ".";
  const absolute = path.startsWith("/");
  const trailing = path.endsWith("/");
  let tail = collapse(path, absolute);
  if (tail === "" && !absolute) tail = ".";
  if (tail !== "" && trailing) tail += "/";
  return absolute ? `/${tail}` : tail;
}

/** POSIX paths. */
export const posixPath: PathFlavor = {
  sep: "/",
  join(...segments: string[]): string {
    const joined = segments.filter((s) => s !== "").join("/");
    return joined === "" ? "." : posixNormalize(joined);
  },
  dirname(path: string): string {
    const rooted = path.startsWith("/");
    const parent = parentBySlicing(path, rooted ? 1 : 0, (c) => c === "/");
    if (parent === null) return rooted ? "/" : ".";
    return parent === "/" ? "//" : parent; // "//x": POSIX leaves a leading "//" implementation-defined, node keeps it
  },
  resolve(...segments: string[]): string {
    let resolved = "";
    let absolute = false;
    for (let i = segments.length - 1; i >= -1 && !absolute; i--) {
      const segment = i >= 0 ? segments[i] : Deno.cwd();
      if (segment === "") continue;
      resolved = resolved === "" ? segment : `${segment}/${resolved}`;
      absolute = segment.startsWith("/");
    }
    const tail = collapse(resolved, absolute);
    if (absolute) return `/${tail}`;
    return tail === "" ? "." : tail;
  },
};

/**
 * The text before the last separator that precedes the final name (trailing
 * separators ignored), searching no further left than `rootEnd`; null when
 * there is none. Slicing keeps the caller's separators, as node:path does.
 */
function parentBySlicing(
  path: string,
  rootEnd: number,
  isSeparator: (c: string) => boolean,
): string | null {
  let seenName = false;
  for (let i = path.length - 1; i >= Math.max(rootEnd, 1); i--) {
    if (isSeparator(path[i])) {
      if (seenName) return path.slice(0, i);
    } else {
      seenName = true;
    }
  }
  return null;
}

/** Length of a Windows path's root: `C:\`, `C:`, `\\`, `\\server\share\`, or 0. */
function windowsRootLength(path: string): number {
  const unc = /^[\\/]{2}[^\\/]+[\\/]+[^\\/]+[\\/]?/.exec(path);
  if (unc) return unc[0].length;
  if (/^[A-Za-z]:[\\/]/.test(path)) return 3;
  if (/^[A-Za-z]:/.test(path)) return 2;
  return /^[\\/]/.test(path) ? 1 : 0;
}

type WindowsParts = {
  /** `C:` or `\\server\share` (as typed, separators as backslashes), or "". */
  device: string;
  /** True when the path starts at the device's root. */
  rooted: boolean;
  /** The rest, with `/` as the separator. */
  tail: string;
  /** True for a `\\server\share` device. */
  unc: boolean;
};

function windowsParts(path: string): WindowsParts {
  const slashed = path.replaceAll("\\", "/");
  const unc = /^\/\/([^/]+)\/+([^/]+)(\/.*)?$/.exec(slashed);
  if (unc) {
    return {
      device: `\\\\${unc[1]}\\${unc[2]}`,
      rooted: true,
      tail: unc[3] ?? "",
      unc: true,
    };
  }
  const drive = /^([A-Za-z]:)(.*)$/s.exec(slashed);
  if (drive) {
    return {
      device: drive[1],
      rooted: drive[2].startsWith("/"),
      tail: drive[2],
      unc: false,
    };
  }
  return { device: "", rooted: slashed.startsWith("/"), tail: slashed, unc: false };
}

function windowsFormat(parts: WindowsParts, tail: string, trailing: boolean): string {
  const body = tail.replaceAll("/", "\\");
  if (parts.rooted) {
    return `${parts.device}\\${body}${body !== "" && trailing ? "\\" : ""}`;
  }
  if (body === "") return `${parts.device}.${trailing ? "\\" : ""}`;
  return `${parts.device}${body}${trailing ? "\\" : ""}`;
}

function windowsNormalize(path: string): string {
  if (path === "") return ".";
  const parts = windowsParts(path);
  const trailing = /[\\/]$/.test(path);
  return windowsFormat(parts, collapse(parts.tail, parts.rooted), trailing);
}

/** Windows paths: drive letters, `\\server\share` roots, either slash accepted. */
export const windowsPath: PathFlavor = {
  sep: "\\",
  join(...segments: string[]): string {
    const parts = segments.filter((s) => s !== "");
    if (parts.length === 0) return ".";
    let joined = parts.join("\\");
    // Joining must not invent a `\\server\share` root: only a first segment
    // that itself starts with exactly two separators keeps them.
    if (!/^[\\/]{2}(?![\\/])/.test(parts[0])) joined = joined.replace(/^[\\/]{2,}/, "\\");
    return windowsNormalize(joined);
  },
  dirname(path: string): string {
    const rootEnd = windowsRootLength(path);
    if (rootEnd === path.length && rootEnd > 0) return path;
    return parentBySlicing(path, rootEnd, (c) => c === "\\" || c === "/") ??
      (rootEnd === 0 ? "." : path.slice(0, rootEnd));
  },
  resolve(...segments: string[]): string {
    let device = "";
    let tail = "";
    let rooted = false;
    let unc = false;
    for (let i = segments.length - 1; i >= -1; i--) {
      const segment = i >= 0 ? segments[i] : Deno.cwd();
      if (segment === "") continue;
      const parts = windowsParts(segment);
      if (parts.device !== "") {
        if (device !== "" && parts.device.toLowerCase() !== device.toLowerCase()) continue;
        if (device === "") {
          device = parts.device;
          unc = parts.unc;
        }
      }
      if (!rooted) {
        tail = tail === "" ? parts.tail : `${parts.tail}/${tail}`;
        rooted = parts.rooted;
      }
      if (rooted && device !== "") break;
    }
    return windowsFormat({ device, rooted, tail, unc }, collapse(tail, rooted), false);
  },
};

/** The path flavour of the OS family `os` (`Deno.build.os`). */
export function pathFlavorFor(os: string): PathFlavor {
  return os === "windows" ? windowsPath : posixPath;
}

/** The flavour of the OS bimri runs on. */
export const nativePath: PathFlavor = pathFlavorFor(Deno.build.os);

/** `join` of the running OS's flavour, for modules that would otherwise import node:path. */
export const join: (...segments: string[]) => string = nativePath.join;
