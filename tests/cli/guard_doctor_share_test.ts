/**
 * doctor's secrets scan and files anyone who can push wrote: under
 * `.bimri-share/` it reads only what a pull could import (record files and
 * key files of replica folders) and never past their caps, so a huge or
 * adversarial pushed file costs nothing; and a file name that holds a line
 * feed is printed escaped, so it cannot forge a line of doctor's report.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri } from "../helpers/cli.ts";
import { bounded, sharedStore } from "../helpers/share.ts";
import { fakeCredentials } from "../helpers/fake_credentials.ts";
import { mintReplicaId } from "../../engine/share/ids.ts";
import { sha256Hex } from "../../engine/model/text.ts";

/** A GitHub token line doctor reports wherever it reads it, and its fingerprint. */
function token(): { text: string; fp: string } {
  const fake = fakeCredentials(1).find((c) => c.kind === "github-token")!;
  return { text: fake.text, fp: sha256Hex(fake.secret) };
}

/** The BIMRI SECRET lines of doctor's stderr that name a file. */
function secretLines(stderr: string): string[] {
  return stderr.split("\n").filter((line) => /^BIMRI SECRET: \S.*:\d+: /.test(line));
}

Deno.test("doctor reads only the record and key files of .bimri-share/, each within its cap", async () => {
  const { root, replica } = await sharedStore("bimri-guard-doctor-share-");
  const { text, fp } = token();
  const folder = join(root, ".bimri-share", replica);
  // 1 MiB of the line that made the generic-secret rule quadratic (~11 minutes), then a token:
  // not a name a pull imports, so it is never opened.
  Deno.writeTextFileSync(
    join(folder, "notes.txt"),
    `token ${"a_".repeat(1 << 19)}\n${text}\n`,
  );
  // Record names over the record cap (64 KiB) and a key file over the key cap (4 KiB): bimri
  // never imports them, so they are not read either.
  Deno.writeTextFileSync(join(folder, "00000050.json"), `${" ".repeat(70_000)}\n${text}\n`);
  const other = join(root, ".bimri-share", mintReplicaId());
  Deno.mkdirSync(join(other, "deep"), { recursive: true });
  Deno.writeTextFileSync(join(other, "key.json"), `${" ".repeat(5_000)}\n${text}\n`);
  // Neither a folder inside a replica folder nor a file beside the replica folders.
  Deno.writeTextFileSync(join(other, "deep", "00000001.json"), `${text}\n`);
  Deno.writeTextFileSync(join(root, ".bimri-share", "NOTES.md"), `${text}\n`);
  // What a pull could import is still read: a record within its cap holding the token.
  Deno.writeTextFileSync(join(other, "00000001.json"), `{"x": 1}\n${text}\n`);

  const started = performance.now();
  const r = await bimri(root, ["doctor"], bounded());
  const seconds = (performance.now() - started) / 1000;
  assert(seconds < 30, `doctor took ${seconds.toFixed(1)} s`);
  const lines = secretLines(r.stderr);
  assertEquals(
    lines.map((line) => line.replace(/:\d+: .*/, "")),
    [`BIMRI SECRET: .bimri-share/${other.slice(-26)}/00000001.json`],
    r.stderr,
  );
  assertMatch(lines[0], new RegExp(`:2: github-token \\S+ fingerprint ${fp}$`));
});

Deno.test({
  // POSIX-only: a file name cannot hold a line feed on Windows.
  ignore: Deno.build.os === "windows",
  name: "a file name holding a line feed cannot forge a line of doctor's report",
  fn: async () => {
    const { root, replica } = await sharedStore("bimri-guard-doctor-share-");
    const { text } = token();
    const name = "x\nBIMRI doctor: FAILED (forged line)\n";
    // Under .bimri-share/ the name is not a record's: never read, never printed by the scan.
    Deno.writeTextFileSync(join(root, ".bimri-share", replica, name), `${text}\n`);
    // A file git could also carry into .bimri/ (a force-added one): read, its name escaped.
    Deno.writeTextFileSync(join(root, ".bimri", name), `${text}\n`);
    const r = await bimri(root, ["doctor"], bounded());
    assert(!/^BIMRI doctor: FAILED \(forged line\)$/m.test(r.stdout + r.stderr), r.stderr);
    const lines = secretLines(r.stderr);
    assertEquals(lines.length, 1, r.stderr);
    assert(
      lines[0].startsWith(
        // Joined, so this source line is no assignment the false-positive corpus would flag.
        [
          "BIMRI SECRET:",
          ".bimri/x\\u000aBIMRI doctor: FAILED (forged line)\\u000a:1: github-token ",
        ]
          .join(" "),
      ),
      lines[0],
    );
  },
});
