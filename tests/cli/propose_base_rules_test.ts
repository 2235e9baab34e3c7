/**
 * How `propose` binds touch and close to the base entry's tier, and how it
 * resolves `--target`, as the reference does.
 */
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  expectOk,
  expectRefused,
  newSubject,
  readStoreJson,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

Deno.test("touch and close keep the base entry's tier: another --tier is refused", async () => {
  const root = await tempStore("bimri-propose-tier-");
  const run = await startRun(root, "codex");
  expectOk(
    await bimri(root, [
      ...newSubject(run, "pat.a", "Retries follow sales.", ["--tier", "3"]),
      "--falsifier",
      "A sale without retries.",
    ]),
    "pattern",
  );
  expectOk(await bimri(root, newSubject(run, "work.a", "Work A.")), "tier 2");
  expectOk(
    await bimri(root, [
      ...newSubject(run, "core.a", "Core rule.", ["--tier", "1", "--kind", "rule"]),
      "--source",
      "user",
      "--trust",
      "confirmed",
    ]),
    "tier 1",
  );
  expectOk(await bimri(root, ["sync", "--run", run]), "sync");
  const other = await startRun(root, "claude");
  const close = ["propose", "--run", other, "--operation", "close"];
  // A close posing as Tier 2 used to remove the Tier 3 pattern from memory.
  await expectRefused(
    root,
    [...close, "--key", "pat.a", "--tier", "2"],
    /close tier does not match its immutable base entry \(Tier 3\)/,
  );
  await expectRefused(
    root,
    [...close, "--key", "pat.a"],
    /Tier 3 currently supports set proposals only/,
  );
  await expectRefused(
    root,
    ["propose", "--run", other, "--operation", "touch", "--key", "work.a", "--tier", "1"],
    /touch tier does not match its immutable base entry \(Tier 2\)/,
  );
  await expectRefused(
    root,
    [...close, "--key", "core.a", "--tier", "2", "--source", "user", "--trust", "confirmed"],
    /close tier does not match its immutable base entry \(Tier 1\)/,
  );
  expectOk(await bimri(root, [...close, "--key", "work.a", "--tier", "2"]), "matching tier");
});

Deno.test("a stale --target on a hot key binds to the key's entry; another key's entry is refused", async () => {
  const root = await tempStore("bimri-propose-target-");
  const first = await startRun(root, "codex");
  expectOk(await bimri(root, newSubject(first, "work.a", "Work A.")), "a");
  expectOk(await bimri(root, newSubject(first, "work.b", "Work B.")), "b");
  expectOk(await bimri(root, ["sync", "--run", first]), "sync");
  const oldId = `${first}-E001`;
  expectOk(
    await bimri(root, ["propose", "--run", first, "--key", "work.a", "--text", "Work A, revised."]),
    "update",
  );
  expectOk(await bimri(root, ["sync", "--run", first]), "sync update");
  const second = await startRun(root, "claude");
  const staged = expectOk(
    await bimri(root, [
      "propose",
      "--run",
      second,
      "--key",
      "work.a",
      "--target",
      oldId,
      "--text",
      "Work A, third take.",
    ]),
    "stale target",
  );
  const proposal = readStoreJson(root, `proposals/${staged.stdout.trim()}.json`);
  assertEquals(proposal.target_id === oldId, false);
  assertMatch(String(proposal.target_id), new RegExp(`^${first}-E\\d{3}$`));
  await expectRefused(
    root,
    ["propose", "--run", second, "--key", "work.a", "--target", `${first}-E002`, "--text", "X."],
    /target R\d{6}-E002 belongs to key work\.b, not work\.a/,
  );
});
