/**
 * .gitattributes keeps store fixtures and templates byte-exact and sources LF
 * in a checkout made the Windows way (core.autocrlf=true): the repository's
 * real .gitattributes goes into a scratch repository with sample files, which
 * is then cloned with autocrlf and compared byte for byte.
 */
import { dirname, join } from "node:path";
import { assertEquals } from "../helpers/assert.ts";
import { REPO_ROOT, runProcess } from "./dist_helpers.ts";
import { tempStore } from "../helpers/cli.ts";

const SAMPLES: Record<string, string> = {
  // Store data, including a CR that a text conversion would touch.
  "tests/fixtures/store/.bimri/state.json": '{\n  "head_revision": 3\n}\n',
  "tests/fixtures/store/bimri.md": "# BIMRI Memory\r\nmixed endings\nkept\r\n",
  "tests/fixtures/store/.bimri/log/R000001.md": "[ID:R000001-E001] [I:3] note\n",
  "templates/BIMRI-MEMORY.template.md": "# template\n\nbody\n",
  "templates/hooks-example.json": '{\n  "hooks": {}\n}\n',
  // Sources stay LF too.
  "main.ts": 'console.log("x");\n',
  "templates/mod.ts": "export const X = 1;\n",
  ".ci/run": "#!/usr/bin/env bash\necho ok\n",
};

async function git(cwd: string, ...args: string[]): Promise<string> {
  const result = await runProcess("git", [
    "-c",
    "user.name=bimri-test",
    "-c",
    "user.email=test@bimri.invalid",
    "-c",
    "init.defaultBranch=main",
    ...args,
  ], { cwd });
  assertEquals(result.code, 0, `git ${args.join(" ")}: ${result.stderr}`);
  return result.stdout;
}

Deno.test(".gitattributes keeps fixtures and templates byte-exact and sources LF under autocrlf", async () => {
  const scratch = await tempStore("bimri-gitattr-");
  const origin = join(scratch, "origin");
  const clone = join(scratch, "clone");
  Deno.mkdirSync(origin);
  await git(origin, "init", "--quiet");
  Deno.copyFileSync(join(REPO_ROOT, ".gitattributes"), join(origin, ".gitattributes"));
  for (const [path, text] of Object.entries(SAMPLES)) {
    Deno.mkdirSync(dirname(join(origin, path)), { recursive: true });
    Deno.writeTextFileSync(join(origin, path), text);
  }
  await git(origin, "add", "-A");
  await git(origin, "commit", "--quiet", "-m", "samples");
  await git(scratch, "-c", "core.autocrlf=true", "clone", "--quiet", origin, clone);
  for (const [path, text] of Object.entries(SAMPLES)) {
    assertEquals(Deno.readTextFileSync(join(clone, path)), text, path);
  }
  // Without these rules autocrlf turns every LF-only sample above into CRLF; name the rules.
  const rules = await runProcess("git", [
    "-c",
    "core.autocrlf=true",
    "check-attr",
    "text",
    "eol",
    "--",
    "tests/fixtures/store/bimri.md",
    "main.ts",
  ], { cwd: clone });
  assertEquals(
    rules.stdout,
    [
      "tests/fixtures/store/bimri.md: text: unset",
      "tests/fixtures/store/bimri.md: eol: unset",
      "main.ts: text: set",
      "main.ts: eol: lf",
      "",
    ].join("\n"),
  );
  await Deno.remove(scratch, { recursive: true });
});
