/**
 * The rules of DESIGN.md section 3 and the room ranks of issue 43, held
 * against every .ts file of engine/, commands/, mcp/, ui/ and main.ts (the
 * checker is tests/helpers/layering.ts): imports point down the ranks, the
 * model does no I/O, the adapters are loaded only by their verb, and no file
 * circle exists anywhere (static, type-only and literal dynamic imports).
 */
import { deepStrictEqual, ok } from "node:assert/strict";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  fileCircles,
  importGraph,
  importSpecifiers,
  layeringViolations,
} from "../helpers/layering.ts";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Every .ts file of the checked folders and main.ts, by repo-relative path. */
function repositorySources(): Map<string, string> {
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
  for (const folder of ["engine", "commands", "mcp", "ui"]) visit(folder);
  files.set("main.ts", Deno.readTextFileSync(join(REPO, "main.ts")));
  return files;
}

Deno.test("the repository keeps every layering rule", () => {
  const files = repositorySources();
  ok(files.has("engine/model/state.ts") && files.has("commands/mod.ts") && files.has("main.ts"));
  const total = [...files.values()].reduce((n, s) => n + importSpecifiers(s).length, 0);
  ok(total > 1000, `only ${total} imports found; is the scanner broken?`);
  deepStrictEqual(layeringViolations(files), []);
});

/** The file each violation line names first. */
function offenders(files: Map<string, string>): string[] {
  return layeringViolations(files).map((line) => line.split(" ")[0].replace(/:$/, ""));
}

Deno.test("the checker catches each kind of bad import", () => {
  const bad = new Map([
    ["engine/memory/x.ts", 'import { runCommand } from "../../commands/run.ts";'],
    ["engine/install/x.ts", 'const m = await import("../../mcp/server.ts");'],
    ["engine/model/x.ts", 'import type {\n  Store,\n} from "../store/store.ts";'],
    ["engine/model/y.ts", 'export { join } from "node:path";'],
    ["engine/model/z.ts", "export const read = () => Deno.readTextFileSync('x');"],
    ["engine/model/w.ts", 'export const now = () => Deno.env.get("BIMRI_NOW");'],
    ["engine/store/x.ts", 'import "../memory/commit.ts";'],
    ["engine/retrieval/x.ts", 'import "../memory/commit.ts";'],
    ["engine/integrity/x.ts", 'import type { R } from "../memory/review.ts";'],
    ["engine/integrity/y.ts", 'import { detect } from "../migrate/detect.ts";'],
    ["engine/integrity/z.ts", 'import { install } from "../install/install.ts";'],
    ["engine/memory/y.ts", 'import { exportAccepted } from "../share/export.ts";'],
    ["engine/records/x.ts", 'import { audit } from "../integrity/doctor.ts";'],
    ["commands/x.ts", 'import { serveMcp } from "../mcp/server.ts";'],
    ["commands/y.ts", 'const { startUi } = await import("../ui/server.ts");'],
    ["mcp/x.ts", 'import { mcpCommand } from "../commands/mcp.ts";'],
    ["ui/x.ts", 'import { uiCommand } from "../commands/ui.ts";'],
    ["ui/y.ts", 'import { serveMcp } from "../mcp/server.ts";'],
    ["engine/share/x.ts", 'import { main } from "../../main.ts";'],
    ["engine/store/y.ts", 'import { x } from "../../tools/x.ts";'],
  ]);
  deepStrictEqual(offenders(bad), [...bad.keys()]);
});

Deno.test("the checker lets every allowed import through", () => {
  const fine = new Map([
    [
      "engine/model/ok.ts",
      '/** e.g. import { x } from "../store/files.ts"; Deno.readFileSync */\nimport "./json.ts";\nimport "../errors.ts";',
    ],
    ["engine/retrieval/ok.ts", 'import { readDecision } from "../records/decision.ts";'],
    ["engine/memory/ok.ts", 'import { join } from "node:path";\nimport "../retrieval/ok.ts";'],
    ["engine/install/ok.ts", 'import { TEMPLATES } from "../../templates/mod.ts";'],
    ["mcp/ok.ts", 'import { runCommand } from "../commands/run.ts";'],
    ["ui/ok.ts", 'import type { CommandResult } from "../commands/command.ts";'],
    ["commands/mcp.ts", 'const { serveMcp } = await import("../mcp/server.ts");'],
    ["commands/ui.ts", 'const { startUi } = await import("../ui/server.ts");'],
    ["main.ts", 'import { runCommand } from "./commands/run.ts";'],
  ]);
  deepStrictEqual(layeringViolations(fine), []);
});

Deno.test("the checker finds a deliberate circle, through type-only and dynamic imports", () => {
  const circle = new Map([
    ["engine/retrieval/a.ts", 'import type { B } from "./b.ts";'],
    ["engine/retrieval/b.ts", 'export { c } from "./c.ts";'],
    ["engine/retrieval/c.ts", 'const a = await import("./a.ts");'],
    ["engine/retrieval/d.ts", 'import "./a.ts";'],
    ["commands/self.ts", 'import "./self.ts";'],
  ]);
  deepStrictEqual(layeringViolations(circle), [
    "file circle: commands/self.ts",
    "file circle: engine/retrieval/a.ts -> engine/retrieval/b.ts -> engine/retrieval/c.ts",
  ]);
  circle.set("engine/retrieval/c.ts", "export const c = 1;");
  circle.set("commands/self.ts", "");
  deepStrictEqual(layeringViolations(circle), []);
});

Deno.test("the circle search separates two circles joined by a one-way import", () => {
  const graph = new Map([
    ["a", ["b"]],
    ["b", ["a", "c"]],
    ["c", ["d"]],
    ["d", ["c"]],
    ["e", []],
  ]);
  deepStrictEqual(fileCircles(graph), [["a", "b"], ["c", "d"]]);
  deepStrictEqual(
    importGraph(new Map([["x/a.ts", 'import "./b.ts";\nimport "node:fs";'], ["x/b.ts", ""]])),
    new Map([["x/a.ts", ["x/b.ts"]], ["x/b.ts", []]]),
  );
});
