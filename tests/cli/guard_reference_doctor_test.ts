/**
 * A redacted store passes the REFERENCE engine's read-only doctor (the Python
 * `bimri-engine.py` named by BIMRI_REFERENCE_ENGINE), as well as bimri's, and
 * no file of the (unshared) store holds the secret any more: for
 * a credential written by the reference engine (no guard) into journal,
 * proposal, close summary and current memory, and for one bimri wrote while
 * allowed into a stale-base conflict and its resolution. Without the variable
 * the tests are skipped (their names say so).
 */
import { match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { bimri, must, newSubject, startRun, tempStore } from "../helpers/cli.ts";
import { fakeCredentials } from "../helpers/fake_credentials.ts";
import { sha256Hex } from "../../engine/model/text.ts";

const REFERENCE = Deno.env.get("BIMRI_REFERENCE_ENGINE") ?? "";
const SKIP = REFERENCE === "";
const SUFFIX = SKIP
  ? " (SKIPPED: set BIMRI_REFERENCE_ENGINE to the reference bimri-engine.py to run it)"
  : "";

async function reference(root: string, args: string[]): Promise<{ code: number; out: string }> {
  const output = await new Deno.Command("python3", {
    args: [REFERENCE, "--root", root, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, out: decode(output.stdout) + decode(output.stderr) };
}

async function referenceMust(root: string, args: string[]): Promise<string> {
  const r = await reference(root, args);
  strictEqual(r.code, 0, `reference ${args.join(" ")}: ${r.out}`);
  return r.out;
}

/** Redacts `fp` and checks both read-only doctors pass and nothing shows the secret. */
async function redactAndAudit(root: string, secret: string, fp: string): Promise<void> {
  const before = await reference(root, ["doctor", "--read-only"]);
  strictEqual(before.code, 0, `reference doctor before redaction: ${before.out}`);
  const out = await must(root, ["secrets", "redact", fp, "--human-approved"]);
  ok(!out.includes(secret), out);
  const ours = await bimri(root, ["doctor", "--read-only"]);
  strictEqual(ours.code, 0, ours.stdout + ours.stderr);
  ok(!(ours.stdout + ours.stderr).includes(secret));
  const theirs = await reference(root, ["doctor", "--read-only"]);
  strictEqual(theirs.code, 0, `reference doctor after redaction: ${theirs.out}`);
  match(theirs.out, /BIMRI doctor \(read-only\): PASSED/);
  // An unshared store holds it nowhere any more (only the backup outside memory does).
  const walk = (dir: string, rel: string): string[] =>
    [...Deno.readDirSync(dir)].flatMap((e) => {
      const path = join(dir, e.name);
      const name = rel === "" ? e.name : `${rel}/${e.name}`;
      if (name === ".bimri-redaction-backups") return [];
      if (e.isDirectory) return walk(path, name);
      return e.isFile && Deno.readTextFileSync(path).includes(secret) ? [name] : [];
    });
  strictEqual(walk(root, "").join(", "), "");
  // The reference engine still reads and serves the rewritten memory.
  const recalled = await reference(root, ["search", "--query", "redacted"]);
  strictEqual(recalled.code, 0, recalled.out);
  match(recalled.out, /\[REDACTED [a-z-]+ sha256:/);
}

Deno.test({
  name: "a credential the reference engine wrote is redacted; the reference doctor passes" +
    SUFFIX,
  ignore: SKIP,
  fn: async () => {
    const root = await tempStore("bimri-guard-refdoc-");
    const fake = fakeCredentials(1).find((c) => c.kind === "slack-token")!;
    const fp = sha256Hex(fake.secret);
    await referenceMust(root, ["start", "--actor", "legacy"]);
    await referenceMust(root, ["journal", "--run", "R000001", "--text", fake.text]);
    await referenceMust(root, newSubject("R000001", "chat.bot", fake.text));
    await referenceMust(root, [
      "close",
      "--run",
      "R000001",
      "--outcome",
      "success",
      "--summary",
      fake.text,
    ]);
    const found = await bimri(root, ["doctor", "--read-only"]);
    match(found.stderr, new RegExp(`fingerprint ${fp}`));
    await redactAndAudit(root, fake.secret, fp);
  },
});

Deno.test({
  name: "a credential in a stale-base conflict, its resolution and an archive row is redacted; " +
    "the reference doctor passes" + SUFFIX,
  ignore: SKIP,
  fn: async () => {
    const root = await tempStore("bimri-guard-refdoc-");
    const fake = fakeCredentials(1).find((c) => c.kind === "stripe-key")!;
    const fp = sha256Hex(fake.secret);
    await must(root, ["secrets", "allow", fp, "--human-approved"]);
    const first = await startRun(root);
    await must(root, newSubject(first, "pay.key", "the payment key lives in the vault"));
    await must(root, ["close", "--run", first, "--outcome", "success", "--summary", "ok"]);
    const a = await startRun(root, "alpha");
    const b = await startRun(root, "beta");
    await must(root, ["journal", "--run", b, "--text", fake.text]);
    await must(root, ["propose", "--run", a, "--key", "pay.key", "--text", "rotated monthly"]);
    await must(root, ["propose", "--run", b, "--key", "pay.key", "--text", fake.text]);
    await must(root, ["close", "--run", a, "--outcome", "success", "--summary", "ok"]);
    await must(root, ["close", "--run", b, "--outcome", "success", "--summary", "ok"]);
    await must(root, ["resolve", "C000001", "--choose", `${b}-Q001`, "--human-approved"]);
    // A later change archives the generation that held it (a `replaced` archive row).
    const c = await startRun(root, "gamma");
    await must(root, ["propose", "--run", c, "--key", "pay.key", "--text", "moved to the vault"]);
    await must(root, ["close", "--run", c, "--outcome", "success", "--summary", "ok"]);
    Deno.removeSync(join(root, ".bimri-secrets.json"));
    await redactAndAudit(root, fake.secret, fp);
  },
});
