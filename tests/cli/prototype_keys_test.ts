/**
 * "constructor" is a valid memory key (lowercase words) and also the name of
 * a member every JavaScript object inherits. A subject under that key must
 * behave like any other, hot and cold: lookups in state's maps count only
 * their own entries.
 */
import { join } from "node:path";
import { canonicalJson } from "../../engine/store/canonical_json.ts";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, expectOk, newSubject, readStoreJson, startRun, tempStore } from "../helpers/cli.ts";

const KEY = "constructor";

Deno.test("a subject keyed constructor is proposed, read, cooled and read cold like any other", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  const cli = (args: string[]) => bimri(root, args);

  const absent = await cli(["get", "--key", KEY]);
  assertEquals(absent.code, 1, absent.stderr);
  assertMatch(absent.stdout, /no memory matched constructor/);

  const propose = await cli(newSubject(run, KEY, "Subject keyed constructor."));
  assertEquals(propose.code, 0, propose.stderr);
  assertEquals(propose.stdout, `${run}-Q001\n`);
  expectOk(await cli(["sync", "--run", run]), "sync");
  assertMatch(
    expectOk(await cli(["get", "--key", KEY]), "get hot").stdout,
    /^HOT\tconstructor\t\S+\tcurrent\t.*Subject keyed constructor\.$/m,
  );

  // Lower the ceiling (a hand edit of state.json) so the next subject cools this one.
  const state = readStoreJson(root, "state.json");
  state.hot_max_bytes = Deno.statSync(join(root, "bimri.md")).size + 40;
  Deno.writeTextFileSync(join(root, ".bimri/state.json"), canonicalJson(state as never));
  expectOk(
    await cli(
      newSubject(
        run,
        "other.subject",
        "A more important subject, long enough to push the view over its ceiling.",
        ["--importance", "5"],
      ),
    ),
    "propose other",
  );
  expectOk(await cli(["sync", "--run", run]), "sync other");
  const cold = readStoreJson(root, "state.json").cold_current as Record<string, unknown>;
  assertEquals(Object.keys(cold), [KEY]);

  assertMatch(
    expectOk(await cli(["get", "--key", KEY]), "get cold").stdout,
    /^COLD\tconstructor\t\S+\tcurrent\t.*Subject keyed constructor\.$/m,
  );
  expectOk(
    await cli(["propose", "--run", run, "--key", KEY, "--text", "Constructor, updated."]),
    "propose update of the cold subject",
  );
  expectOk(await cli(["sync", "--run", run]), "sync update");
  assertMatch(
    expectOk(await cli(["get", "--key", KEY]), "get updated").stdout,
    /^HOT\tconstructor\t\S+\tcurrent\t.*Constructor, updated\.$/m,
  );
  expectOk(
    await cli(["close", "--run", run, "--outcome", "success", "--summary", "Done."]),
    "close",
  );
  assertMatch(expectOk(await cli(["doctor"]), "doctor").stdout, /BIMRI doctor: PASSED/);
});
