/**
 * A pusher chooses the names in `.bimri-share/`: a record file named
 * `99999999.json` in a replica folder nobody trusts, or thousands of junk
 * files, must cost what the files present cost, never what their numbers
 * say, and the refusals a command prints stay bounded (every one counted).
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, type CliResult } from "../helpers/cli.ts";
import { gitOk, publish, sharedClones, textOf } from "../helpers/share.ts";
import { mintReplicaId } from "../../engine/share/ids.ts";

/** A minute at most per command: one that runs out of memory or hangs fails the test. */
function bounded(): { signal: AbortSignal } {
  return { signal: AbortSignal.timeout(60_000) };
}

/** True when the command ended by itself, with exit 0 or 2 and no stack trace. */
function endedCleanly(r: CliResult): boolean {
  return (r.code === 0 || r.code === 2) && !/out of memory|heap limit|\n\s+at /i.test(r.stderr);
}

Deno.test("fake replica folders holding 99999999.json cost what their files cost: every command finishes and the gap line gives the count", async () => {
  const { clones: [a, b] } = await sharedClones({ "good.one": "Good one." });
  // A pusher commits six replica folders, each holding one empty record 99999999.
  const fakes: string[] = [];
  for (let i = 0; i < 6; i++) {
    const replica = mintReplicaId();
    fakes.push(replica);
    Deno.mkdirSync(join(a, ".bimri-share", replica));
    Deno.writeTextFileSync(join(a, ".bimri-share", replica, "99999999.json"), "{}");
  }
  await publish(a, "fake replicas");
  await gitOk(b, ["pull", "-q", "--no-edit", "origin", "main"]);
  for (
    const args of [
      ["start", "--actor", "codex"],
      ["share", "status"],
      ["share", "pull"],
      ["doctor"],
      ["review"],
    ]
  ) {
    const began = performance.now();
    const r = await bimri(b, args, bounded());
    const took = performance.now() - began;
    assert(endedCleanly(r), `${args.join(" ")}: exit ${r.code}\n${r.stderr.slice(0, 2000)}`);
    assert(took < 20_000, `${args.join(" ")} took ${Math.round(took)} ms`);
  }
  const status = await bimri(b, ["share", "status"], bounded());
  for (const replica of fakes) {
    assertMatch(
      status.stdout,
      new RegExp(
        `^BIMRI SHARE GAP: replica ${replica} is missing records 1, 2, 3, 4, 5, 6, 7, 8 and 99999990 more \\(99999998 in all\\)`,
        "m",
      ),
    );
  }
  const json = JSON.parse((await bimri(b, ["--json", "share", "status"], bounded())).stdout);
  const gap = json.gaps.find((g: { replica: string }) => g.replica === fakes[0]);
  assertEquals(gap.count, 99_999_998);
  assertEquals(gap.missing, [1, 2, 3, 4, 5, 6, 7, 8]);
  // The real memory is untouched.
  assertEquals(await textOf(b, "good.one"), "Good one.");
});
