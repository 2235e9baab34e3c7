/**
 * The layering rules of DESIGN.md section 3, checked on the import statements
 * of every .ts file under engine/:
 * - the engine never imports its adapters (commands/, mcp/, main.ts);
 * - engine/model/ is pure data: it imports only engine/model/, engine/errors.ts
 *   and engine/versions.ts, and no runtime module (node:, npm:, jsr:, URLs),
 *   so nothing that reads or writes files can reach it;
 * - engine/retrieval/ reads records through engine/records/, never through
 *   engine/memory/ (the write side).
 */
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, assertEquals } from "../helpers/assert.ts";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** What `model/` files may import besides each other. */
const MODEL_MAY_IMPORT = new Set(["engine/errors.ts", "engine/versions.ts"]);

/** Deno calls that touch files or processes; none belongs in model/. */
const FILE_OR_PROCESS_CALL =
  /\bDeno\.(?:open|create|read|write|stat|lstat|mkdir|remove|rename|readDir|realPath|truncate|chmod|chown|link|symlink|copyFile|makeTemp|Command|run|fsync|utime)\w*\b/;

/** Source without comments, so examples in doc comments are not taken for imports. */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

/** The specifiers a module imports: static, re-exported, side-effect and literal dynamic. */
export function importSpecifiers(source: string): string[] {
  const code = withoutComments(source);
  const specifiers: string[] = [];
  const statement =
    /(?:^|[;\n}])\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?["']([^"']+)["']/g;
  const dynamic = /\bimport\(\s*["']([^"']+)["']\s*\)/g;
  for (const match of code.matchAll(statement)) specifiers.push(match[1]);
  for (const match of code.matchAll(dynamic)) specifiers.push(match[1]);
  return specifiers;
}

/** A specifier as a repo-relative path with `/` separators; runtime modules unchanged. */
function target(file: string, specifier: string): string {
  if (!specifier.startsWith(".")) return specifier;
  return relative(REPO, resolve(REPO, dirname(file), specifier)).split(sep).join("/");
}

/** Every broken rule in `files` (repo-relative path -> source), one line each. */
export function layeringViolations(files: Map<string, string>): string[] {
  const problems: string[] = [];
  for (const [file, source] of files) {
    for (const specifier of importSpecifiers(source)) {
      const to = target(file, specifier);
      const say = (rule: string) => problems.push(`${file} imports ${specifier}: ${rule}`);
      if (/^(?:commands|mcp|ui)\//.test(to) || to === "main.ts") {
        say("engine/ must not import its adapters (commands/, mcp/, ui/, main.ts)");
      }
      if (file.startsWith("engine/model/") && !to.startsWith("engine/model/")) {
        if (!MODEL_MAY_IMPORT.has(to)) {
          say("engine/model/ is pure data (only model/, errors.ts, versions.ts)");
        }
      }
      if (file.startsWith("engine/retrieval/") && to.startsWith("engine/memory/")) {
        say("engine/retrieval/ must read records through engine/records/, not engine/memory/");
      }
    }
    if (file.startsWith("engine/model/") && FILE_OR_PROCESS_CALL.test(withoutComments(source))) {
      problems.push(`${file} calls a Deno file or process API: engine/model/ does no I/O`);
    }
  }
  return problems;
}

/** Every .ts file under engine/, by repo-relative path. */
function engineSources(): Map<string, string> {
  const files = new Map<string, string>();
  const visit = (folder: string) => {
    for (const entry of Deno.readDirSync(join(REPO, folder))) {
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory) visit(path);
      else if (entry.isFile && entry.name.endsWith(".ts")) {
        files.set(path, Deno.readTextFileSync(join(REPO, path)));
      }
    }
  };
  visit("engine");
  return files;
}

Deno.test("engine/ keeps its layers: no adapters, pure model/, retrieval/ apart from memory/", () => {
  const files = engineSources();
  assert(files.has("engine/model/state.ts") && files.has("engine/retrieval/records.ts"));
  const total = [...files.values()].reduce((n, s) => n + importSpecifiers(s).length, 0);
  assert(total > 500, `only ${total} imports found under engine/; is the scanner broken?`);
  assertEquals(layeringViolations(files), []);
});

Deno.test("the layering check catches each kind of bad import", () => {
  const bad = new Map([
    ["engine/memory/x.ts", 'import { runCommand } from "../../commands/run.ts";'],
    ["engine/install/x.ts", 'const m = await import("../../mcp/server.ts");'],
    ["engine/model/x.ts", 'import type {\n  Store,\n} from "../store/store.ts";'],
    ["engine/model/y.ts", 'export { join } from "node:path";'],
    ["engine/model/z.ts", "export const read = () => Deno.readTextFileSync('x');"],
    ["engine/retrieval/x.ts", 'import "../memory/commit.ts";'],
  ]);
  assertEquals(layeringViolations(bad).map((line) => line.split(":")[0].split(" ")[0]), [
    "engine/memory/x.ts",
    "engine/install/x.ts",
    "engine/model/x.ts",
    "engine/model/y.ts",
    "engine/model/z.ts",
    "engine/retrieval/x.ts",
  ]);
  const fine = new Map([
    [
      "engine/model/ok.ts",
      '/** e.g. import { x } from "../store/files.ts"; */\nimport "./json.ts";',
    ],
    ["engine/retrieval/ok.ts", 'import { readDecision } from "../records/decision.ts";'],
  ]);
  assertEquals(layeringViolations(fine), []);
});

/** Every .ts file under `folder` (repo-relative paths), plus main.ts when asked. */
function sourcesUnder(folders: string[]): Map<string, string> {
  const files = new Map<string, string>();
  const visit = (folder: string) => {
    for (const entry of Deno.readDirSync(join(REPO, folder))) {
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory) visit(path);
      else if (entry.isFile && entry.name.endsWith(".ts")) {
        files.set(path, Deno.readTextFileSync(join(REPO, path)));
      }
    }
  };
  for (const folder of folders) visit(folder);
  files.set("main.ts", Deno.readTextFileSync(join(REPO, "main.ts")));
  return files;
}

Deno.test("only commands/ui.ts imports the console (ui/), and ui/ never imports mcp/", () => {
  const problems: string[] = [];
  for (const [file, source] of sourcesUnder(["commands", "mcp", "ui"])) {
    for (const specifier of importSpecifiers(source)) {
      const to = target(file, specifier);
      if (to.startsWith("ui/") && !file.startsWith("ui/") && file !== "commands/ui.ts") {
        problems.push(`${file} imports ${specifier}: only commands/ui.ts loads the console`);
      }
      if (file.startsWith("ui/") && to.startsWith("mcp/")) {
        problems.push(`${file} imports ${specifier}: ui/ and mcp/ are separate adapters`);
      }
    }
  }
  assertEquals(problems, []);
});
