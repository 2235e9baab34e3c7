/**
 * The CI workflow's test job runs exactly `.ci/run` on Linux, macOS and
 * Windows, and `.ci/run` runs fmt, lint, check and `deno task test`; no step
 * changes Git's line-ending settings, so Windows checks out with its default.
 */
import { join } from "node:path";
import { deepStrictEqual, ok } from "node:assert/strict";
import { REPO_ROOT } from "./dist_helpers.ts";

const WORKFLOW = Deno.readTextFileSync(join(REPO_ROOT, ".github", "workflows", "ci.yml"));

Deno.test("the CI test job runs .ci/run, and only that, on every OS", () => {
  const job = WORKFLOW.slice(WORKFLOW.indexOf("  test:"), WORKFLOW.indexOf("  binary:"));
  ok(/os: \[ubuntu-latest, macos-latest, windows-latest\]/.test(job), job);
  const runs = [...job.matchAll(/^\s+run: (.+)$/gm)].map((m) => m[1]);
  deepStrictEqual(runs, ["bash .ci/run"]);
  const steps = WORKFLOW.split("\n").filter((line) => !/^\s*#/.test(line)).join("\n");
  ok(!/autocrlf|core\.eol/.test(steps), "the workflow leaves Git's line endings alone");
});

Deno.test(".ci/run runs fmt, lint, check and the README's test command", () => {
  const script = Deno.readTextFileSync(join(REPO_ROOT, ".ci", "run"));
  const commands = script.split("\n").filter((line) => /^deno (?!--version)/.test(line));
  deepStrictEqual(commands, ["deno fmt --check", "deno lint", "deno task check", "deno task test"]);
});
