import { isAbsolute } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { withoutPathHint } from "../helpers/install_notices.ts";
import { bimri, tempStore } from "../helpers/cli.ts";
import { TEMPLATES } from "../../templates/mod.ts";

const START = "<!-- BIMRI:START -->";
const END = "<!-- BIMRI:END -->";

function read(path: string): string {
  return Deno.readTextFileSync(path);
}

Deno.test("install into an empty folder: layout, genesis, adapters, bindings, smoke, doctor", async () => {
  const base = await tempStore("bimri-install-");
  const target = `${base}/project`; // does not exist yet
  const r = await bimri(base, ["install", "--target", target], { noRoot: true });
  assertEquals(r.code, 0, r.stderr + r.stdout);
  // The reference's headline comes first, so scripts written against it still find it.
  assertMatch(r.stdout, /^BIMRI 5\.1\.2 installed\.\n/);
  assertMatch(
    r.stdout,
    /^bimri \S+ installed into .* \(compatible engine 5\.1\.2, memory format 5\.1\.0, hot grammar 5\.0\.2\)\.$/m,
  );
  assertMatch(r.stdout, /^Verified runtime \((compiled|deno-run)\): \/\S+/m);
  assertMatch(
    r.stdout,
    /^Memory: initialized at v5\.1\.0 \(T1\/T2\/T3 20\/40\/12, entry 500 chars, 49,152 bytes\)\.$/m,
  );
  assertMatch(
    r.stdout,
    /^Hook smoke test: PASSED \(hook-start opened R000001 for a synthetic session in a throwaway copy /m,
  );
  assertMatch(r.stdout, /^Doctor passed\.$/m);
  assertMatch(r.stdout, /Never commit either \.local\.json file/);
  assertEquals(withoutPathHint(r.stderr), "");
  // Genesis memory is byte-identical to the reference's V000000.
  assertEquals(read(`${target}/bimri.md`), TEMPLATES["BIMRI-MEMORY.template.md"]);
  assertEquals(read(`${target}/.bimri/revisions/V000000.md`), read(`${target}/bimri.md`));
  for (
    const name of ["BIMRI-AGENT-BLOCK.md", "INSTALL.md", "hooks-example.json", "BIMRI-LICENSE"]
  ) {
    assertEquals(read(`${target}/${name}`), TEMPLATES[name], name);
  }
  const agents = read(`${target}/AGENTS.md`);
  assert(agents.startsWith(TEMPLATES["AGENTS.md"]));
  assert(agents.includes(`${START}\n${TEMPLATES["BIMRI-AGENT-BLOCK.md"].trim()}\n${END}\n`));
  assert(read(`${target}/CLAUDE.md`).startsWith(`${START}\n@AGENTS.md\n`));
  // The smoke run happened in a throwaway copy: like the reference's install, no run is left here.
  const state = JSON.parse(read(`${target}/.bimri/state.json`));
  assertEquals(state.run_count, 0);
  assertEquals(state.active_runs, {});
  assertEquals(state.session_runs, {});
  assertEquals(state.last_started_at, null);
  assertEquals([...Deno.readDirSync(`${target}/.bimri/log`)], []);
  const runtime = JSON.parse(read(`${target}/.bimri/runtime.local.json`));
  assertEquals(runtime.host_bound, true);
  assert(Array.isArray(runtime.argv_prefix) && isAbsolute(runtime.argv_prefix[0]));
  assertEquals(runtime.versions.memory_format, "5.1.0");
  assert(read(`${target}/.bimri/index.tsv`).startsWith("id\tkey\tloc\t"));
  const backups = [...Deno.readDirSync(`${target}/.bimri/install-backups`)];
  assertEquals(backups.length, 1);
  const manifest = JSON.parse(
    read(`${target}/.bimri/install-backups/${backups[0].name}/install-manifest.json`),
  );
  assertEquals(manifest.status, "installed");
  // Portable files carry no machine path; the host-bound ones do.
  for (const name of ["AGENTS.md", "CLAUDE.md", "hooks-example.json", "INSTALL.md"]) {
    assert(!read(`${target}/${name}`).includes(runtime.argv_prefix[0]), name);
  }
});

Deno.test("install keeps owner AGENTS.md/CLAUDE.md prose byte for byte, is idempotent, leaves an orphan start marker", async () => {
  const target = await tempStore("bimri-install-owner-");
  const agentsOwner = "# Team rules\n\n  Indented  prose, trailing spaces   \n\nUse tabs\there.\n";
  const claudeOwner =
    `# Claude notes\n\nI quote the marker ${START} in my own prose.\nAnd keep this line.\n`;
  Deno.writeTextFileSync(`${target}/AGENTS.md`, agentsOwner);
  Deno.writeTextFileSync(`${target}/CLAUDE.md`, claudeOwner);
  Deno.writeTextFileSync(`${target}/LICENSE`, "owner license\n");
  const r = await bimri(target, ["install", "--target", target], { noRoot: true });
  assertEquals(r.code, 0, r.stderr + r.stdout);
  const agents = read(`${target}/AGENTS.md`);
  assert(agents.startsWith(agentsOwner.trimEnd() + "\n\n" + START + "\n"), agents.slice(0, 200));
  assert(agents.endsWith(`${END}\n`));
  const claude = read(`${target}/CLAUDE.md`);
  assert(claude.startsWith(claudeOwner.trimEnd() + "\n\n" + START + "\n@AGENTS.md"), claude);
  assertEquals(read(`${target}/LICENSE`), "owner license\n");

  // Owner edits after the block survive a re-install; the block is not duplicated.
  Deno.writeTextFileSync(`${target}/AGENTS.md`, agents + "\n## Added later by the owner\n");
  Deno.writeTextFileSync(
    `${target}/CLAUDE.md`,
    claude.replace("@AGENTS.md", "@AGENTS.md\nstale text the owner never wrote"),
  );
  const again = await bimri(target, ["install", "--target", target, "--quiescent"], {
    noRoot: true,
  });
  assertEquals(again.code, 0, again.stderr + again.stdout);
  assertEquals(read(`${target}/AGENTS.md`), agents + "\n## Added later by the owner\n");
  assertEquals(read(`${target}/CLAUDE.md`), claude);
  assertEquals(read(`${target}/CLAUDE.md`).split(END).length, 2);
  // A third install changes nothing in the adapters.
  const third = await bimri(target, ["install", "--target", target, "--quiescent"], {
    noRoot: true,
  });
  assertEquals(third.code, 0, third.stderr);
  assertEquals(read(`${target}/AGENTS.md`), agents + "\n## Added later by the owner\n");
  assertEquals(read(`${target}/CLAUDE.md`), claude);
});

Deno.test("a fresh install leaves no run: status shows none and the first hook session gets R000001", async () => {
  const target = await tempStore("bimri-install-norun-");
  const r = await bimri(target, ["install", "--target", target], { noRoot: true });
  assertEquals(r.code, 0, r.stderr + r.stdout);
  const status = await bimri(target, ["status"]);
  assertEquals(status.code, 0, status.stderr);
  assertMatch(status.stdout, /\| runs 0 \| active 0$/m);
  assert(!status.stdout.includes("Outcomes:"), status.stdout);
  const opened = await bimri(target, ["hook-start"], {
    stdin: JSON.stringify({ session_id: "first-real-session" }),
  });
  assertEquals(opened.code, 0, opened.stderr);
  assertMatch(opened.stdout, /^BIMRI RUN HANDLE: R000001$/m);
});
