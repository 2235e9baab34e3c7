/**
 * A reader that closes its end of the pipe early (`bimri start | head -1`)
 * leaves the command's outcome and exit code as they are, as in the
 * reference: no "unexpected failure" about a store that is fine.
 */
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { commandPrefix, readStoreJson, tempStore } from "../helpers/cli.ts";

async function runWithClosedStdout(root: string, args: string[]) {
  const [cmd, ...prefix] = commandPrefix();
  const child = new Deno.Command(cmd, {
    args: [...prefix, "--root", root, ...args],
    env: { TZ: "UTC" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Closed long before the process has started up and written anything.
  await child.stdout.cancel();
  const stderr = new TextDecoder().decode(
    (await new Response(child.stderr).arrayBuffer()) as ArrayBuffer,
  );
  const { code } = await child.status;
  return { code, stderr };
}

Deno.test("a closed stdout does not turn a finished command into a failure", async () => {
  const root = await tempStore("bimri-closed-out-");
  const started = await runWithClosedStdout(root, ["start", "--actor", "codex"]);
  // The first command in an empty folder says on stderr that it created the store.
  assertEquals(started.code, 0);
  assertMatch(started.stderr, /^BIMRI: created a new memory store in /);
  const state = readStoreJson(root, "state.json") as { active_runs: Record<string, unknown> };
  assertEquals(Object.keys(state.active_runs), ["R000001"]);
  assertEquals(await runWithClosedStdout(root, ["status"]), { code: 0, stderr: "" });
  const missing = await runWithClosedStdout(root, ["get", "--key", "no.such"]);
  assertEquals(missing, { code: 1, stderr: "" });
});
