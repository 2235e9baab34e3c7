/**
 * Every `Deno.build.os` branch of the engine (and the MCP server), proven for
 * both OS families with the OS injected: link refusals that tell a symbolic
 * link or junction from other Windows reparse points, folder fsync, disk-full
 * errors, the path flavour and the stop signals. (The rename retry has its
 * own injected-OS tests in windows_paths_test.ts.)
 */
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { linkKind, type LinkProbe, linkRefusal } from "../../engine/store/files.ts";
import { syncsFolders } from "../../engine/store/files.ts";
import { osCondition } from "../../engine/errors.ts";
import { pathFlavorFor, posixPath, windowsPath } from "../../engine/store/os_path.ts";
import { stopSignals } from "../../mcp/server.ts";

/** A system of family `os` whose readLink succeeds only for `links`. */
function probe(os: string, links: string[]): LinkProbe {
  return {
    os,
    readLink: (path) => {
      if (links.includes(path)) return "C:\\elsewhere";
      throw new Error(`The file or directory is not a reparse point. (os error 4390)`);
    },
  };
}

Deno.test("link refusals: POSIX says symbolic link, with the wording unchanged", () => {
  strictEqual(linkKind("/p/.bimri/index.tsv", probe("linux", [])), "symlink");
  strictEqual(linkKind("/p/x", probe("darwin", [])), "symlink");
  strictEqual(
    linkRefusal(".bimri/index.tsv", ".bimri/index.tsv", "delete it.", probe("linux", [])),
    ".bimri/index.tsv is a symbolic link; delete it.",
  );
});

Deno.test("link refusals on Windows: a link or junction is refused as one; another reparse point is named as such", () => {
  const windows = probe("windows", ["C:\\p\\link"]);
  strictEqual(linkKind("C:\\p\\link", windows), "symlink-or-junction");
  strictEqual(linkKind("C:\\p\\dedup.md", windows), "other-reparse-point");
  strictEqual(
    linkRefusal("C:\\p\\link", "run log R000001.md", "replace it.", windows),
    "run log R000001.md is a symbolic link or junction; replace it.",
  );
  const placeholder = linkRefusal("C:\\p\\dedup.md", "run log R000001.md", "replace it.", windows);
  match(
    placeholder,
    /^run log R000001\.md is a reparse point that is not a symbolic link or junction/,
  );
  match(placeholder, /deduplicated file or a cloud placeholder/);
  match(placeholder, /keep the file on this device.*then run the command again\.$/);
  ok(!placeholder.includes("is a symbolic link;"), placeholder);
});

Deno.test("folders are fsynced on POSIX only", () => {
  deepStrictEqual(["linux", "darwin", "windows"].map(syncsFolders), [true, true, false]);
});

Deno.test("Windows disk-full codes count as disk full on Windows only", () => {
  const full = new Error("There is not enough space on the disk. (os error 112)");
  const handleFull = new Error("Reached the end of the file. (os error 39)");
  strictEqual(osCondition(full, "windows"), "disk-full");
  strictEqual(osCondition(handleFull, "windows"), "disk-full");
  strictEqual(osCondition(full, "linux"), null);
  const enospc = Object.assign(new Error("No space left on device (os error 28)"), {
    code: "ENOSPC",
  });
  strictEqual(osCondition(enospc, "linux"), "disk-full");
});

Deno.test("the path flavour follows the OS family", () => {
  strictEqual(pathFlavorFor("windows"), windowsPath);
  strictEqual(pathFlavorFor("linux"), posixPath);
  strictEqual(pathFlavorFor("darwin"), posixPath);
});

Deno.test("the MCP server listens for the signals the OS family has", () => {
  deepStrictEqual(stopSignals("windows"), ["SIGINT", "SIGBREAK"]);
  deepStrictEqual(stopSignals("linux"), ["SIGINT", "SIGTERM", "SIGHUP"]);
});
