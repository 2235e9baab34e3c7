/**
 * Names what a path that `lstat` reports as a link really is, for link
 * refusals. On POSIX that is a symbolic link. On Windows, Deno's `lstat`
 * may report any reparse point as a link: a symbolic link and a junction
 * (both must be refused: they redirect a path outside the store), but also
 * a deduplicated file or a cloud placeholder (OneDrive "files on demand"),
 * which redirect nothing. `Deno.readLink` succeeds only for the first kind
 * (name-surrogate reparse points), so it tells them apart. Deno exposes no
 * reparse tag, so a symbolic link cannot be told from a junction (both are
 * refused, named together), and a non-link reparse point is still refused
 * (the safe side: Deno's flags for it are not those of a regular file, and
 * bimri's exclusive create and atomic replace are not proven on it) with a
 * message saying what it is and how to make it a regular file.
 */

/** What a path reported as a link is. */
export type LinkKind = "symlink" | "symlink-or-junction" | "other-reparse-point";

/** What the classification needs from the system (injected in unit tests). */
export type LinkProbe = {
  /** The OS family (`Deno.build.os`). */
  os: string;
  /** Reads a link's target; throws when `path` is no symbolic link or junction. */
  readLink: (path: string) => string;
};

/** The running process's system. */
export const NATIVE_LINK_PROBE: LinkProbe = {
  os: Deno.build.os,
  readLink: (path) => Deno.readLinkSync(path),
};

/** Classifies `path`, which `lstat` reported as a symbolic link. */
export function linkKind(path: string, probe: LinkProbe = NATIVE_LINK_PROBE): LinkKind {
  if (probe.os !== "windows") return "symlink";
  try {
    probe.readLink(path);
    return "symlink-or-junction";
  } catch {
    return "other-reparse-point";
  }
}

/** The noun phrase of a refusal, e.g. `a symbolic link` (POSIX wording unchanged). */
export function linkNoun(kind: LinkKind): string {
  switch (kind) {
    case "symlink":
      return "a symbolic link";
    case "symlink-or-junction":
      return "a symbolic link or junction";
    case "other-reparse-point":
      return "a reparse point that is not a symbolic link or junction (such as a deduplicated file or a cloud placeholder)";
  }
}

/** The step that clears the refusal, for a non-link reparse point; empty for links. */
export function linkNextStep(kind: LinkKind): string {
  return kind === "other-reparse-point"
    ? " BIMRI refuses it to be safe, as it cannot check such a file is a plain local file: make it one (for a cloud folder, keep the file on this device; for deduplication, exclude the folder), then run the command again."
    : "";
}

/**
 * The refusal text for `path`, which `lstat` reported as a link:
 * `<label> is <what it is>; <rest>`, plus how to make a non-link reparse
 * point a regular file. On POSIX the text is `<label> is a symbolic link; <rest>`.
 */
export function linkRefusal(
  path: string,
  label: string,
  rest: string,
  probe: LinkProbe = NATIVE_LINK_PROBE,
): string {
  const kind = linkKind(path, probe);
  return `${label} is ${linkNoun(kind)}; ${rest}${linkNextStep(kind)}`;
}
