import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, hashTree } from "../helpers/cli.ts";
import { copyFixture } from "../fixtures/fixtures.ts";

Deno.test("install migrates v3 memory, keeps the installer backups out of the migration, and self-checks", async () => {
  const target = await copyFixture("legacy-v3");
  const original = Deno.readFileSync(`${target}/BIMRI.md`);
  const r = await bimri(target, ["install", "--target", target], { noRoot: true });
  assertEquals(r.code, 0, r.stderr + r.stdout);
  assertMatch(r.stdout, /^Memory: migrated BIMRI v3 from BIMRI\.md to v5\.1\.0\.$/m);
  assertMatch(r.stdout, /^Validation: PASSED\.$/m);
  assertMatch(r.stdout, /^Hook smoke test: rendered hook verified /m);
  assertMatch(r.stdout, /^Doctor passed\.$/m);
  const backups = [...Deno.readDirSync(`${target}/.bimri/install-backups`)];
  assertEquals(backups.length, 1);
  // The installer's own rollback copy holds the exact legacy bytes.
  assertEquals(
    Deno.readFileSync(`${target}/.bimri/install-backups/${backups[0].name}/BIMRI.md`),
    original,
  );
  const state = JSON.parse(Deno.readTextFileSync(`${target}/.bimri/state.json`));
  assertEquals(state.bimri_version, "5.1.0");
  assertEquals(state.active_runs, {});
  // No synthetic hook run is added to migrated memory.
  for (const entry of Deno.readDirSync(`${target}/.bimri/log`)) {
    const log = Deno.readTextFileSync(`${target}/.bimri/log/${entry.name}`);
    assert(!log.includes("actor:claude-code"), entry.name);
  }
  assert(Deno.readTextFileSync(`${target}/AGENTS.md`).includes("<!-- BIMRI:START -->"));
});

Deno.test("install --quiescent activates the reference v5.0.2 store, then updates code only", async () => {
  const target = await copyFixture("reference-v5.0.2-populated");
  Deno.writeTextFileSync(`${target}/.bimri/engine.lock`, "0");
  const keep = (tree: Map<string, string>) =>
    new Map(
      [...tree].filter(([p]) =>
        (p === "bimri.md" || p.startsWith(".bimri/")) && p !== ".bimri/state.json" &&
        !p.startsWith(".bimri/audit-manifests") && p !== ".bimri/engine.lock" &&
        !p.endsWith(".local.json")
      ),
    );
  const before = keep(hashTree(target));
  const refused = await bimri(target, ["install", "--target", target], { noRoot: true });
  assertEquals(refused.code, 2);
  assertMatch(refused.stderr, /v5\.0\.2 store requires .*--quiescent/);
  const r = await bimri(target, ["install", "--target", target, "--quiescent"], { noRoot: true });
  assertEquals(r.code, 0, r.stderr + r.stdout);
  assertMatch(r.stdout, /^Accepted head unchanged: V000008 [0-9a-f]{64}\.$/m);
  assertMatch(r.stdout, /^Memory preservation: PASSED /m);
  assertEquals([...keep(hashTree(target))], [...before]);
  const state = JSON.parse(Deno.readTextFileSync(`${target}/.bimri/state.json`));
  assertEquals(state.bimri_version, "5.1.0");
});
