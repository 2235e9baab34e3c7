import { assert, assertEquals } from "../helpers/assert.ts";
import { TEMPLATES } from "../../templates/mod.ts";
import { TEMPLATE_FILES } from "../../templates/generate.ts";
import { GENESIS_VIEW } from "../../engine/model/hot.ts";
import { genesisState, stateToJson } from "../../engine/model/state.ts";
import { BIMRI_PLACEHOLDER, renderHooks } from "../../engine/install/hooks_config.ts";

const dir = new URL("../../templates/", import.meta.url);

Deno.test("the embedded templates equal the editable files (regenerate with templates/generate.ts)", () => {
  assertEquals(Object.keys(TEMPLATES).sort(), [...TEMPLATE_FILES].sort());
  for (const name of TEMPLATE_FILES) {
    assertEquals(TEMPLATES[name], Deno.readTextFileSync(new URL(name, dir)), name);
  }
});

Deno.test("templates carry the placeholder, the markers and no machine path", () => {
  for (const [name, text] of Object.entries(TEMPLATES)) {
    assert(
      !/(^|[\s"'`(])\/(usr|home|tmp|work|Users|opt)\//.test(text),
      `${name} has an absolute path`,
    );
    assert(!/[A-Za-z]:\\\\/.test(text), `${name} has a Windows path`);
    // The launcher is the one Python file: it runs the bound bimri for `python3 bimri-engine.py`.
    if (name !== "bimri-engine.py") assert(!text.includes("python"), `${name} mentions python`);
  }
  const launcher = TEMPLATES["bimri-engine.py"];
  assert(launcher.includes('".bimri", "runtime.local.json"'), "the launcher reads the binding");
  assert(launcher.length < 4096, "the launcher stays a launcher");
  const block = TEMPLATES["BIMRI-AGENT-BLOCK.md"];
  assert(block.includes("\n<!-- BIMRI:RUNTIME-BINDING:START -->\n"));
  assert(block.includes("\n<!-- BIMRI:RUNTIME-BINDING:END -->\n"));
  assert(block.includes("<bimri> start --actor"));
  assert(block.includes("<bimri> close --run"));
  assert(TEMPLATES["CLAUDE.md"].startsWith("@AGENTS.md\n"));
  assert(TEMPLATES["hooks-example.json"].includes(`"${BIMRI_PLACEHOLDER}"`));
});

Deno.test("memory and state templates are the genesis view and genesis state", () => {
  assertEquals(TEMPLATES["BIMRI-MEMORY.template.md"], GENESIS_VIEW);
  const expected = stateToJson(genesisState("0".repeat(64)));
  assertEquals(JSON.parse(TEMPLATES["BIMRI-STATE.template.json"]), {
    ...JSON.parse(JSON.stringify(expected)),
    head_hash: null,
  });
});

Deno.test("hooks render in argument form with --root bound to CLAUDE_PROJECT_DIR", () => {
  const rendered = JSON.parse(renderHooks(TEMPLATES["hooks-example.json"], ["/opt/bimri"]));
  const start = rendered.hooks.SessionStart[0].hooks[0];
  assertEquals(start, {
    type: "command",
    command: "/opt/bimri",
    args: ["--root", "${CLAUDE_PROJECT_DIR}", "hook-start"],
    timeout: 90,
  });
  const end = JSON.parse(renderHooks(TEMPLATES["hooks-example.json"], ["/d/deno", "run", "/m.ts"]))
    .hooks.SessionEnd[0].hooks[0];
  assertEquals(end.command, "/d/deno");
  assertEquals(end.args, ["run", "/m.ts", "--root", "${CLAUDE_PROJECT_DIR}", "hook-close"]);
  assertEquals(rendered.hooks.SessionStart[0].matcher, "");
});
