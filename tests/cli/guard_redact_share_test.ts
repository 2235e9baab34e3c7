/**
 * `secrets redact` and this clone's share records: one git has not carried
 * anywhere (no remote-tracking ref reaches it) is rewritten with the marker
 * and signed again, so another clone imports it cleanly; one already pushed
 * keeps its bytes, masked on output, and the owner is told to rewrite the
 * history and rotate the credential.
 */
import { match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { bimri, must, newSubject, startRun } from "../helpers/cli.ts";
import {
  cloneAs,
  exportNow,
  fetchMemory,
  gitOk,
  originAndClone,
  publish,
} from "../helpers/share.ts";
import { fakeCredentials } from "../helpers/fake_credentials.ts";
import { sha256Hex } from "../../engine/model/text.ts";

/**
 * A shared clone whose own records hold an allowed-then-unallowed fake key:
 * exported (`share status`, as the pre-commit hook runs it) while allowed.
 */
async function sharedWithSecret() {
  const { base, origin, first } = await originAndClone();
  await must(first, ["share", "init", "--yes"]);
  await publish(first, "share");
  const fake = fakeCredentials(1).find((c) => c.kind === "openai-key")!;
  const fp = sha256Hex(fake.secret);
  await must(first, ["secrets", "allow", fp, "--human-approved"]);
  const run = await startRun(first);
  await must(first, newSubject(run, "llm.key", fake.text));
  await must(first, ["close", "--run", run, "--outcome", "success", "--summary", "ok"]);
  // The close leaves its change for the next export, which runs while the key is allowed.
  ok(ownRecordsHolding(first, fake.secret).length === 0, "close wrote no record");
  await exportNow(first);
  Deno.removeSync(join(first, ".bimri-secrets.json"));
  return { base, origin, first, fake, fp };
}

function ownRecordsHolding(root: string, secret: string): string[] {
  const out: string[] = [];
  for (const replica of Deno.readDirSync(join(root, ".bimri-share"))) {
    if (!replica.isDirectory) continue;
    for (const file of Deno.readDirSync(join(root, ".bimri-share", replica.name))) {
      const path = join(root, ".bimri-share", replica.name, file.name);
      if (file.isFile && Deno.readTextFileSync(path).includes(secret)) out.push(path);
    }
  }
  return out;
}

Deno.test("an own share record not yet pushed is rewritten and signed again; a clone imports it", async () => {
  const { base, origin, first, fake, fp } = await sharedWithSecret();
  ok(ownRecordsHolding(first, fake.secret).length > 0, "the export holds the allowed secret");
  const out = await must(first, ["secrets", "redact", fp, "--human-approved"]);
  match(out, /REWRITTEN \.bimri-share\/[a-z2-7]{26}\/[0-9]+\.json/);
  ok(!/Shared records git already carried/.test(out), out);
  strictEqual(ownRecordsHolding(first, fake.secret).length, 0);
  // The kept copies (restored if git removes a record) hold no secret either.
  for (const entry of Deno.readDirSync(join(first, ".bimri", "share-sent"))) {
    for (const file of Deno.readDirSync(join(first, ".bimri", "share-sent", entry.name))) {
      const path = join(first, ".bimri", "share-sent", entry.name, file.name);
      if (file.isFile) ok(!Deno.readTextFileSync(path).includes(fake.secret), path);
    }
  }
  const doctor = await bimri(first, ["doctor"]);
  strictEqual(doctor.code, 0, doctor.stdout + doctor.stderr);
  await publish(first, "memory");
  const second = await cloneAs(base, origin, "b");
  await fetchMemory(second);
  const got = await must(second, ["get", "--key", "llm.key"]);
  match(got, /\[REDACTED openai-key sha256:/);
  ok(!got.includes(fake.secret));
});

Deno.test("an own share record already pushed keeps its bytes; the owner is told to rewrite history", async () => {
  const { first, fake, fp } = await sharedWithSecret();
  await publish(first, "memory");
  const held = ownRecordsHolding(first, fake.secret);
  ok(held.length > 0);
  const out = await must(first, ["secrets", "redact", fp, "--human-approved"]);
  match(out, /KEPT \.bimri-share\//);
  match(out, /Shared records git already carried \(pushed\) hold it/);
  match(out, /rotate the credential/);
  ok(!out.includes(fake.secret));
  for (const path of held) ok(Deno.readTextFileSync(path).includes(fake.secret), path);
  await gitOk(first, ["status", "--porcelain"]);
});
