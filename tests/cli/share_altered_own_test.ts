/**
 * A pusher alters one of this clone's already exported records (the file is
 * there, but no longer the bytes this clone wrote): the author notices it in
 * `share status` (so in the pre-commit hook), `share pull` and `doctor`,
 * names it, and writes it back from the copy kept in `.bimri/share-sent/`.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, must } from "../helpers/cli.ts";
import {
  agentSets,
  cloneAs,
  fetchMemory,
  gitOk,
  publish,
  sharedClones,
  textOf,
} from "../helpers/share.ts";

const replicaOf = (clone: string) =>
  JSON.parse(Deno.readTextFileSync(join(clone, ".bimri", "replica.local.json"))).replica as string;

Deno.test("an own record a pusher altered is named and written back from its kept copy, and the other clones then import it", async () => {
  const { base, origin, clones: [a, b] } = await sharedClones({ "team.key": "Team value one." });
  const A = replicaOf(a);
  await agentSets(a, "codex", { "team.key": "Team value two." });
  await publish(a, "a learned");
  const rel = join(".bimri-share", A, "00000002.json");
  const written = Deno.readFileSync(join(a, rel));

  // A pusher alters A's record 2 in git; B refuses it.
  const pusher = await cloneAs(base, origin, "pusher");
  const text = Deno.readTextFileSync(join(pusher, rel));
  Deno.writeTextFileSync(join(pusher, rel), text.replace("Team value two.", "Evil value two."));
  await gitOk(pusher, ["commit", "-q", "-am", "alter"]);
  await gitOk(pusher, ["push", "-q", "origin", "HEAD:main"]);
  await gitOk(b, ["pull", "-q", "--no-edit", "origin", "main"]);
  const refused = await bimri(b, ["share", "pull"]);
  assertEquals(refused.code, 2, refused.stderr);
  assertEquals(await textOf(b, "team.key"), "Team value one.");

  // A pulls the altered file: doctor names it; share status writes it back.
  await gitOk(a, ["pull", "-q", "--no-edit", "origin", "main"]);
  assert(Deno.readTextFileSync(join(a, rel)).includes("Evil value two."));
  const shown = rel.replaceAll("\\", "/").replaceAll(".", "\\.");
  const doctor = await bimri(a, ["doctor"]);
  assertMatch(doctor.stdout, new RegExp(`${shown} was altered after this clone wrote it`));
  const status = await bimri(a, ["share", "status"]);
  assertEquals(status.code, 0, status.stderr);
  assertMatch(
    status.stderr,
    new RegExp(`^BIMRI ERROR: ${shown} was altered after this clone wrote it .*written back`, "m"),
  );
  assertEquals(Deno.readFileSync(join(a, rel)), written);
  // Once: a second look finds nothing to say.
  const again = await bimri(a, ["share", "status"]);
  assert(!/altered/.test(again.stderr), again.stderr);

  await publish(a, "a restored its record");
  await fetchMemory(b);
  assertEquals(await textOf(b, "team.key"), "Team value two.");
  await must(b, ["doctor"]);
});
