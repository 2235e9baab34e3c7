/**
 * `bimri secrets`: the owner allows one exact string by fingerprint or
 * switches a rule off, with --human-approved only, in the committed
 * `.bimri-secrets.json`, which never holds the secret.
 */
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { bimri, diffTrees, hashTree, must, startRun, tempStore } from "../helpers/cli.ts";
import { fakeCredentials } from "../helpers/fake_credentials.ts";
import { sha256Hex } from "../../engine/model/text.ts";

Deno.test("allow and rule switches need --human-approved and keep fingerprints only", async () => {
  const root = await tempStore("bimri-secrets-");
  const run = await startRun(root);
  const [fake] = fakeCredentials(1).filter((c) => c.kind === "stripe-key");
  const fp = sha256Hex(fake.secret);
  const journal = ["journal", "--run", run, "--text", fake.text];
  strictEqual((await bimri(root, journal)).code, 2);

  // Without the owner's approval nothing changes, and no flag skips the guard.
  for (const args of [["secrets", "allow", fp], ["secrets", "disable", "stripe-key"]]) {
    const before = hashTree(root);
    const r = await bimri(root, args);
    strictEqual(r.code, 2, r.stderr);
    match(r.stderr, /only the owner may do it.*--human-approved/);
    strictEqual(diffTrees(before, hashTree(root)), null);
  }
  const bad = await bimri(root, ["secrets", "allow", fake.secret, "--human-approved"]);
  strictEqual(bad.code, 2);
  ok(!bad.stderr.includes(fake.secret), "a secret given by mistake is not echoed");

  match(await must(root, ["secrets", "allow", fp, "--human-approved"]), /allowed/);
  const file = Deno.readTextFileSync(join(root, ".bimri-secrets.json"));
  ok(file.includes(fp) && !file.includes(fake.secret));
  match(await must(root, journal), /^R\d{6}-E\d{3}$/m);
  // Only that exact string: another Stripe key is still refused.
  const [other] = fakeCredentials(3).filter((c) => c.kind === "stripe-key").slice(2);
  strictEqual((await bimri(root, ["journal", "--run", run, "--text", other.text])).code, 2);

  await must(root, ["secrets", "disable", "stripe-key", "--human-approved"]);
  await must(root, ["journal", "--run", run, "--text", other.text]);
  await must(root, ["secrets", "enable", "stripe-key"]);
  strictEqual((await bimri(root, ["journal", "--run", run, "--text", other.text])).code, 2);
  const listed = JSON.parse(await must(root, ["--json", "secrets", "list"]));
  deepStrictEqual([listed.allowed, listed.disabled_rules], [[fp], []]);
});

Deno.test("a malformed policy file keeps the guard on and names the file", async () => {
  const root = await tempStore("bimri-secrets-bad-");
  const run = await startRun(root);
  Deno.writeTextFileSync(join(root, ".bimri-secrets.json"), '{"disabled_rules": "all"}');
  const r = await bimri(root, ["journal", "--run", run, "--text", "plain"]);
  strictEqual(r.code, 2);
  match(r.stderr, /\.bimri-secrets\.json is not a bimri secrets policy/);
});
