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

Deno.test("500 junk files in a replica folder: pull, status and doctor name 20 and count the rest, in text and JSON", async () => {
  const { clones: [a, b] } = await sharedClones({ "good.one": "Good one." });
  const replica = mintReplicaId();
  const folder = join(a, ".bimri-share", replica);
  Deno.mkdirSync(folder);
  for (let i = 1; i <= 250; i++) {
    Deno.writeTextFileSync(join(folder, `junk-${i}.txt`), "junk\n");
    Deno.writeTextFileSync(join(folder, `${String(i).padStart(8, "0")}.json`), "garbage\n");
  }
  await publish(a, "junk");
  await gitOk(b, ["pull", "-q", "--no-edit", "origin", "main"]);
  await bimri(b, ["share", "trust", replica, "--human-approved"], bounded());
  const more = (n: number) =>
    new RegExp(
      `${n - 20} more refused files under \\.bimri-share/ are not named here \\(${n} in all\\)`,
    );

  const pulled = await bimri(b, ["share", "pull"], bounded());
  assertEquals(pulled.code, 2, pulled.stderr.slice(0, 2000));
  const errors = pulled.stderr.split("\n").filter((l) => l.startsWith("BIMRI ERROR:"));
  assertEquals(errors.length, 21, errors.slice(0, 3).join("\n"));
  assertMatch(errors[20], more(500));
  assert(pulled.stdout.length + pulled.stderr.length < 20_000, "share pull output is unbounded");
  const pulledJson = JSON.parse((await bimri(b, ["--json", "share", "pull"], bounded())).stdout);
  assertEquals(pulledJson.problems.length, 20);
  assertEquals(pulledJson.problems_total, 500);

  const status = await bimri(b, ["share", "status"], bounded());
  const refused = status.stdout.split("\n").filter((l) => l.startsWith("REFUSED:"));
  assertEquals(refused.length, 21);
  // status reads no record (names only): it refuses the 250 files not named as records.
  assertMatch(refused[20], more(250));
  const statusJson = JSON.parse((await bimri(b, ["--json", "share", "status"], bounded())).stdout);
  assertEquals(statusJson.problems.length, 20);
  assertEquals(statusJson.problems_total, 250);

  const doctor = await bimri(b, ["doctor"], bounded());
  assertMatch(doctor.stdout, more(500));
  assert(doctor.stdout.length + doctor.stderr.length < 20_000, "doctor output is unbounded");
  assertEquals(await textOf(b, "good.one"), "Good one.");
});
