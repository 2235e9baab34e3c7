/**
 * Nothing holding a credential is published to git: `share init` refuses when
 * current memory already holds one (naming it masked and the next step), and
 * an export refuses a record holding one (here a change the reference engine,
 * which has no guard, made to a shared store; run when BIMRI_REFERENCE_ENGINE
 * names it).
 */
import { match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  bimri,
  diffTrees,
  hashTree,
  must,
  newSubject,
  pathExists,
  startRun,
  tempStore,
} from "../helpers/cli.ts";
import { gitInit } from "../helpers/share.ts";
import { fakeCredentials } from "../helpers/fake_credentials.ts";
import { sha256Hex } from "../../engine/model/text.ts";

const REFERENCE = Deno.env.get("BIMRI_REFERENCE_ENGINE") ?? "";

Deno.test("share init refuses while current memory holds a credential; nothing is published", async () => {
  const root = await tempStore("bimri-guard-publish-");
  await gitInit(root);
  const fake = fakeCredentials(1).find((c) => c.kind === "github-token")!;
  const fp = sha256Hex(fake.secret);
  await must(root, ["secrets", "allow", fp, "--human-approved"]);
  const run = await startRun(root);
  await must(root, newSubject(run, "ci.push", fake.text));
  await must(root, ["close", "--run", run, "--outcome", "success", "--summary", "ok"]);
  Deno.removeSync(join(root, ".bimri-secrets.json"));
  const before = hashTree(root);
  const r = await bimri(root, ["share", "init", "--yes"]);
  strictEqual(r.code, 2, r.stdout + r.stderr);
  match(
    r.stderr,
    /^BIMRI ERROR: share init refused: current memory ci\.push holds what looks like/m,
  );
  match(r.stderr, new RegExp(`fingerprint ${fp}`));
  match(r.stderr, new RegExp(`bimri secrets redact ${fp} --human-approved`));
  match(r.stderr, new RegExp(`bimri secrets allow ${fp} --human-approved`));
  ok(!(r.stdout + r.stderr).includes(fake.secret), "the refusal shows the secret");
  strictEqual(diffTrees(before, hashTree(root)), null);
  ok(!pathExists(join(root, ".bimri-share")));
  // After the owner redacts it, init publishes memory without it.
  await must(root, ["secrets", "redact", fp, "--human-approved"]);
  await must(root, ["share", "init", "--yes"]);
  for (const [file] of hashTree(join(root, ".bimri-share"))) {
    const path = join(root, ".bimri-share", file);
    if (!Deno.statSync(path).isFile) continue;
    const text = Deno.readTextFileSync(path);
    ok(!text.includes(fake.secret), `${file} holds the secret`);
  }
});

Deno.test({
  name: "an export refuses a record holding a credential (a guardless engine's change)" +
    (REFERENCE === "" ? " (SKIPPED: set BIMRI_REFERENCE_ENGINE to run it)" : ""),
  ignore: REFERENCE === "",
  fn: async () => {
    const root = await tempStore("bimri-guard-publish-");
    await gitInit(root);
    await must(root, ["share", "init", "--yes"]);
    const fake = fakeCredentials(1).find((c) => c.kind === "npm-token")!;
    const fp = sha256Hex(fake.secret);
    const py = async (args: string[]) => {
      const out = await new Deno.Command("python3", {
        args: [REFERENCE, "--root", root, ...args],
        stdout: "piped",
        stderr: "piped",
      }).output();
      strictEqual(out.code, 0, new TextDecoder().decode(out.stderr));
      return new TextDecoder().decode(out.stdout);
    };
    const handle = /BIMRI RUN HANDLE: (R\d{6})/.exec(await py(["start", "--actor", "legacy"]))![1];
    await py(newSubject(handle, "npm.auth", fake.text));
    await py(["close", "--run", handle, "--outcome", "success", "--summary", "ok"]);
    const shared = hashTree(join(root, ".bimri-share"));
    const r = await bimri(root, ["share", "status"]);
    const all = r.stdout + r.stderr;
    ok(!all.includes(fake.secret), all);
    match(all, new RegExp(`share export refused: the record .* fingerprint ${fp}`));
    strictEqual(diffTrees(shared, hashTree(join(root, ".bimri-share"))), null);
    // The owner's next step settles it: the redaction's new revision is what gets published.
    await must(root, ["secrets", "redact", fp, "--human-approved"]);
    await must(root, ["share", "status"]);
    for (const [file] of hashTree(join(root, ".bimri-share"))) {
      const path = join(root, ".bimri-share", file);
      if (!Deno.statSync(path).isFile) continue;
      ok(!Deno.readTextFileSync(path).includes(fake.secret), `${file} holds the secret`);
    }
  },
});
