/**
 * doctor finds credential-looking strings already in a store (written before
 * the guard, or allowed then no longer): file, line, kind, masked value and
 * fingerprint on stderr and in --json, without changing the verdict; the
 * read-only doctor writes nothing; unchanged files are not read again.
 */
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  bimri,
  diffTrees,
  hashTree,
  must,
  newSubject,
  startRun,
  tempStore,
} from "../helpers/cli.ts";
import { fakeCredentials } from "../helpers/fake_credentials.ts";
import { maskSecret } from "../../engine/model/credentials.ts";
import { sha256Hex } from "../../engine/model/text.ts";

type Found = { file: string; line: number; kind: string; masked: string; fingerprint: string };

/** A store holding `fake` in a journal entry and in memory (allowed while written, then not). */
async function storeWithSecret(kind: string) {
  const root = await tempStore("bimri-guard-doctor-");
  const fake = fakeCredentials(1).find((c) => c.kind === kind)!;
  const fp = sha256Hex(fake.secret);
  await must(root, ["secrets", "allow", fp, "--human-approved"]);
  const run = await startRun(root);
  await must(root, ["journal", "--run", run, "--text", fake.text]);
  await must(root, newSubject(run, "deploy.key", fake.text));
  await must(root, ["close", "--run", run, "--outcome", "success"]);
  Deno.removeSync(join(root, ".bimri-secrets.json"));
  return { root, fake, fp, run };
}

Deno.test("doctor and doctor --read-only report every stored credential without failing", async () => {
  const { root, fake, fp, run } = await storeWithSecret("openai-key");
  const before = hashTree(root);
  const ro = await bimri(root, ["--json", "doctor", "--read-only"]);
  strictEqual(diffTrees(before, hashTree(root)), null, "doctor --read-only wrote");
  strictEqual(ro.code, 0, ro.stderr);
  const report = JSON.parse(ro.stdout);
  strictEqual(report.passed, true);
  const found = report.credentials as Found[];
  const files = new Set(found.map((f) => f.file));
  for (
    const file of [
      "bimri.md",
      `.bimri/log/${run}.md`,
      `.bimri/proposals/${run}-Q001.json`,
      ".bimri/revisions/V000001.md",
    ]
  ) ok(files.has(file), `${file} not reported: ${[...files]}`);
  for (const f of found) {
    deepStrictEqual([f.kind, f.masked, f.fingerprint], ["openai-key", maskSecret(fake.secret), fp]);
    ok(f.line > 0);
  }
  ok(!ro.stdout.includes(fake.secret) && !ro.stderr.includes(fake.secret));
  match(ro.stderr, /BIMRI SECRET: bimri\.md:\d+: openai-key /);
  match(ro.stderr, /bimri secrets redact <fingerprint> --human-approved/);

  // Plain doctor: the same findings, PASSED, exit 0; stdout is the usual report.
  const plain = await bimri(root, ["doctor"]);
  strictEqual(plain.code, 0, plain.stderr);
  match(plain.stdout, /^BIMRI doctor: PASSED\n/);
  ok(!plain.stdout.includes("openai-key"));
  match(plain.stderr, new RegExp(`log/${run}\\.md:\\d+: openai-key`));

  // Allowed, the string is no longer reported.
  await must(root, ["secrets", "allow", fp, "--human-approved"]);
  const allowed = JSON.parse(await must(root, ["--json", "doctor", "--read-only"]));
  deepStrictEqual(allowed.credentials, []);
});

Deno.test("a file whose fingerprint did not change is not read again", async () => {
  const { root } = await storeWithSecret("jwt");
  await must(root, ["doctor"]); // writes the derived cache
  const cachePath = join(root, ".bimri", "audit-integrity-secrets.json");
  const cache = JSON.parse(Deno.readTextFileSync(cachePath));
  // Doctor trusts the cached findings of an unchanged file: mark one to prove it.
  cache.folders[""].files["bimri.md"].found = [
    { line: 999, kind: "jwt", masked: "cach...ched", fingerprint: "0".repeat(64) },
  ];
  Deno.writeTextFileSync(cachePath, JSON.stringify(cache));
  const report = JSON.parse(await must(root, ["--json", "doctor", "--read-only"]));
  const view = (report.credentials as Found[]).filter((f) => f.file === "bimri.md");
  deepStrictEqual(view.map((f) => f.line), [999]);
  // A changed file is read again.
  Deno.writeTextFileSync(join(root, "bimri.md"), Deno.readTextFileSync(join(root, "bimri.md")));
  const again = JSON.parse(await must(root, ["--json", "doctor", "--read-only"]));
  ok(!(again.credentials as Found[]).some((f) => f.line === 999));
});

Deno.test("an open run's log appended after the cache was built is read again", async () => {
  const root = await tempStore("bimri-guard-doctor-append-");
  const run = await startRun(root);
  await must(root, ["journal", "--run", run, "--text", "nothing secret"]);
  await must(root, ["doctor"]); // the cache now holds this log without findings
  const fake = fakeCredentials(1).find((c) => c.kind === "gitlab-token")!;
  const fp = sha256Hex(fake.secret);
  await must(root, ["secrets", "allow", fp, "--human-approved"]);
  await must(root, ["journal", "--run", run, "--text", fake.text]);
  Deno.removeSync(join(root, ".bimri-secrets.json"));
  const report = JSON.parse(await must(root, ["--json", "doctor", "--read-only"]));
  deepStrictEqual(
    (report.credentials as Found[]).map((f) => [f.file, f.kind]),
    [[`.bimri/log/${run}.md`, "gitlab-token"]],
  );
});
