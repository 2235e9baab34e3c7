/**
 * The release stays consistent: deno.json's version is the release that
 * `--version` prints, and the release workflow checksums, verifies and
 * publishes exactly the files the compile and bundle tasks produce.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../helpers/assert.ts";
import { RUN_PERMISSIONS } from "../helpers/cli.ts";
import {
  AUTHORITY_FORMAT,
  BIMRI_RELEASE,
  ENGINE_COMPAT_RELEASE,
  HOT_GRAMMAR,
  VERSIONS_EXPLAINED,
} from "../../engine/versions.ts";
import { COMPILE_TARGETS, denoTasks, REPO_ROOT, runProcess } from "./dist_helpers.ts";

/** The file names the compile tasks write into dist/, in target order. */
function compiledNames(): string[] {
  const tasks = denoTasks();
  return COMPILE_TARGETS.map((target) => {
    const output = /--output dist\/(\S+)/.exec(tasks[`compile:${target}`])?.[1];
    assert(output, `compile:${target} has no --output dist/...`);
    return output;
  });
}

Deno.test("--version prints the release of deno.json and the formats bimri writes", async () => {
  const config = JSON.parse(Deno.readTextFileSync(join(REPO_ROOT, "deno.json")));
  assertEquals(config.version, BIMRI_RELEASE);
  const version = await runProcess(Deno.execPath(), [
    "run",
    "--quiet",
    ...RUN_PERMISSIONS,
    join(REPO_ROOT, "main.ts"),
    "--version",
  ]);
  assertEquals(version.code, 0, version.stderr);
  assertEquals(
    version.stdout,
    `bimri ${BIMRI_RELEASE} (compatible engine ${ENGINE_COMPAT_RELEASE}, memory format ${AUTHORITY_FORMAT}, hot grammar ${HOT_GRAMMAR})\n${VERSIONS_EXPLAINED}\n`,
  );
});

Deno.test("the release workflow ships exactly what the compile and bundle tasks build", () => {
  const names = compiledNames();
  assertEquals(names, [
    "bimri-x86_64-linux",
    "bimri-aarch64-linux",
    "bimri-x86_64-macos",
    "bimri-aarch64-macos",
    "bimri-x86_64-windows.exe",
  ]);
  const workflow = Deno.readTextFileSync(join(REPO_ROOT, ".github", "workflows", "release.yml"));
  const shipped = [...names, "bimri.js"];
  const checksummed = /sha256sum ([^>]+)> SHA256SUMS/.exec(workflow)?.[1].replaceAll("\\", " ")
    .split(/\s+/).filter((w) => w !== "");
  assertEquals(checksummed, shipped);
  const published = /files="([^"]+)"/.exec(workflow)?.[1].split(" ");
  assertEquals(published, [...shipped, "SHA256SUMS"]);
  const verified = [...workflow.matchAll(/^\s+binary: (\S+)$/gm)].map((m) => m[1]);
  assertEquals(verified.sort(), [...names].sort());
  assert(workflow.includes("deno task compile\n"), "release.yml must build with deno task compile");
  assert(workflow.includes("deno task bundle\n"), "release.yml must build with deno task bundle");
});
