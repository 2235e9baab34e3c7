/**
 * `secrets redact`: the secret leaves every file whose bytes no hash covers,
 * is masked in everything bimri prints, the old bytes wait in a backup outside
 * memory, a receipt is kept; doctor and doctor --read-only pass; a redaction
 * killed at each durable step is finished by running it again.
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
import { gitInit } from "../helpers/share.ts";
import { sha256Hex } from "../../engine/model/text.ts";

/**
 * A store whose journal, memory and close summary hold a fake key. `shared`
 * makes it a shared store first: redaction then keeps the hash-bound records
 * (masked) and gives current memory a new revision instead of rewriting them.
 */
async function storeWithSecret(shared = false) {
  const root = await tempStore("bimri-guard-redact-");
  if (shared) {
    await gitInit(root);
    await must(root, ["share", "init", "--yes"]);
  }
  const fake = fakeCredentials(1).find((c) => c.kind === "slack-token")!;
  const fp = sha256Hex(fake.secret);
  await must(root, ["secrets", "allow", fp, "--human-approved"]);
  const run = await startRun(root);
  await must(root, ["journal", "--run", run, "--text", fake.text]);
  await must(root, newSubject(run, "chat.bot", fake.text));
  await must(root, ["close", "--run", run, "--outcome", "success", "--summary", fake.text]);
  Deno.removeSync(join(root, ".bimri-secrets.json"));
  return { root, fake, fp, run };
}

/** Every command that shows memory, with its output. */
async function shown(root: string): Promise<string> {
  const outputs: string[] = [];
  for (
    const args of [
      ["get", "--key", "chat.bot"],
      ["--json", "get", "--key", "chat.bot"],
      ["recall", "--key", "chat.bot"],
      ["search", "--query", "slack"],
      ["--json", "recall", "--query", "slack"],
      ["review"],
      ["doctor", "--read-only"],
    ]
  ) {
    const r = await bimri(root, args);
    outputs.push(r.stdout, r.stderr);
  }
  const brief = await bimri(root, ["start", "--actor", "reader"]);
  outputs.push(brief.stdout, brief.stderr);
  return outputs.join("\n");
}

async function finalState(root: string, fake: { secret: string }, fp: string, run: string) {
  const log = Deno.readTextFileSync(join(root, ".bimri", "log", `${run}.md`));
  for (const line of log.split("\n")) {
    if (/^\[(?:ID|OUTCOME):/.test(line)) ok(!line.includes(fake.secret), `left in ${line}`);
  }
  match(log, new RegExp(`\\[REDACTED slack-token sha256:${fp}\\]`));
  // Current memory moved on to a revision that holds the marker instead.
  const view = Deno.readTextFileSync(join(root, "bimri.md"));
  ok(!view.includes(fake.secret), "bimri.md still holds the secret");
  match(view, /\[K:chat\.bot\].*\[REDACTED slack-token sha256:/);
  const policy = JSON.parse(Deno.readTextFileSync(join(root, ".bimri-secrets.json")));
  strictEqual(policy.redacted[0].status, "done");
  ok(!JSON.stringify(policy).includes(fake.secret), "the receipt never holds the secret");
  const backup = join(root, policy.redacted[0].backup);
  ok(Deno.readTextFileSync(join(backup, `.bimri__log__${run}.md`)).includes(fake.secret));
  strictEqual(Deno.readTextFileSync(join(root, ".bimri-redaction-backups", ".gitignore")), "*\n");
  const out = await shown(root);
  ok(!out.includes(fake.secret), "a command showed the redacted secret");
  match(out, /\[REDACTED slack-token sha256:/);
  for (const args of [["doctor"], ["doctor", "--read-only"]]) {
    const r = await bimri(root, args);
    strictEqual(r.code, 0, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    match(r.stdout, /PASSED/);
  }
}

Deno.test("redact removes, masks, backs up and records; both doctors pass", async () => {
  const { root, fake, fp, run } = await storeWithSecret();
  ok((await shown(root)).includes(fake.secret), "the secret is shown before redaction");
  const before = hashTree(root);
  const refused = await bimri(root, ["secrets", "redact", fp]);
  strictEqual(refused.code, 2);
  strictEqual(diffTrees(before, hashTree(root)), null);
  const out = await must(root, ["secrets", "redact", fp, "--human-approved"]);
  match(out, new RegExp(`REWRITTEN \\.bimri/log/${run}\\.md`));
  // Not shared: the hash-bound records are rewritten too, every hash recomputed.
  match(out, /REWRITTEN \.bimri\/revisions\/V000001\.md/);
  match(out, /REWRITTEN \.bimri\/proposals\/R000001-Q001\.json/);
  match(out, /REWRITTEN bimri\.md/);
  ok(!/KEPT/.test(out), out);
  match(out, /Rotate the credential/);
  ok(!out.includes(fake.secret));
  await finalState(root, fake, fp, run);
  // Running it again changes no record (derived audit-integrity-* caches may re-vouch).
  const records = () =>
    new Map([...hashTree(join(root, ".bimri"))].filter(([f]) => !f.startsWith("audit-integrity-")));
  const again = records();
  await must(root, ["secrets", "redact", fp, "--human-approved"]);
  deepStrictEqual(diffTrees(again, records()), null);
});

/** Each durable step of both routes: rewriting every record (unshared) and the new revision (shared). */
const CRASHES: Array<[boolean, string]> = [
  [false, "redact-after-backup"],
  [false, "redact-after-receipt"],
  [false, "redact-after-rewrite"],
  [true, "redact-after-receipt"],
  [true, "redact-after-rewrite"],
  [true, "redact-after-propose"],
];

/** A store with the secret whose `secrets redact` was killed at `point`, and its records before. */
async function killedAt(shared: boolean, point: string) {
  const store = await storeWithSecret(shared);
  const memory = hashTree(join(store.root, ".bimri"));
  const killed = await bimri(store.root, ["secrets", "redact", store.fp, "--human-approved"], {
    env: { BIMRI_FAULT: point },
  });
  strictEqual(killed.code, 86, `${point}: ${killed.stderr}`);
  return { ...store, memory };
}

Deno.test("a redaction killed at each durable step is finished by running it again", async () => {
  for (const [shared, point] of CRASHES) {
    const { root, fake, fp, run, memory } = await killedAt(shared, point);
    if (point === "redact-after-backup") {
      // Nothing of memory changed yet: the backup is outside it.
      strictEqual(diffTrees(memory, hashTree(join(root, ".bimri"))), null, point);
    } else {
      ok(!(await shown(root)).includes(fake.secret), `${point}: masked from the receipt on`);
    }
    await must(root, ["secrets", "redact", fp, "--human-approved"]);
    await finalState(root, fake, fp, run);
  }
});

Deno.test("doctor names an interrupted redaction and stops listing a finished one as new", async () => {
  const { root, fp } = await storeWithSecret();
  await bimri(root, ["secrets", "redact", fp, "--human-approved"], {
    env: { BIMRI_FAULT: "redact-after-receipt" },
  });
  const pending = await bimri(root, ["doctor", "--read-only"]);
  match(pending.stderr, new RegExp(`redaction of ${fp} was interrupted`));
  await must(root, ["secrets", "redact", fp, "--human-approved"]);
  const done = await bimri(root, ["doctor", "--read-only"]);
  ok(!done.stderr.includes("BIMRI SECRET:"), done.stderr);
  ok(!done.stderr.includes("was interrupted"), done.stderr);
});

Deno.test("a redaction killed at each durable step is finished (or was never applied) on the next writing command", async () => {
  for (const [shared, point] of CRASHES) {
    const { root, fake, fp, run, memory } = await killedAt(shared, point);
    // The next writing command, not `secrets redact`, settles it.
    const next = await bimri(root, ["start", "--actor", "next"]);
    strictEqual(next.code, 0, `${point}: ${next.stderr}`);
    ok(!(next.stdout + next.stderr).includes(fake.secret), point);
    if (point === "redact-after-backup") {
      // Cut short before its receipt: nothing of memory had changed, so there
      // is nothing to finish; the store is as before (the run's log only grew
      // by the new run's own file) and doctor still lists the secret as new.
      ok(!next.stderr.includes("finished the interrupted redaction"), next.stderr);
      const after = hashTree(join(root, ".bimri"));
      for (const [file, hash] of memory) {
        if (
          !/^(?:revisions|proposals|decisions|archive)\//.test(file) && file !== `log/${run}.md`
        ) continue;
        strictEqual(after.get(file), hash, `${point}: ${file}`);
      }
      const doctor = await bimri(root, ["doctor", "--read-only"]);
      match(doctor.stderr, new RegExp(`fingerprint ${fp}`));
      continue;
    }
    match(next.stderr, new RegExp(`finished the interrupted redaction of ${fp}`), point);
    await finalState(root, fake, fp, run);
  }
});

Deno.test("a rewrite cut short leaves read-only doctor failing with the next step; plain doctor finishes it", async () => {
  const { root, fake, fp, run } = await killedAt(false, "redact-after-rewrite");
  const before = hashTree(join(root, ".bimri"));
  const readOnly = await bimri(root, ["doctor", "--read-only"]);
  strictEqual(readOnly.code, 1, readOnly.stdout);
  match(
    readOnly.stderr,
    new RegExp(`redaction of ${fp} was interrupted; the next writing command`),
  );
  strictEqual(diffTrees(before, hashTree(join(root, ".bimri"))), null);
  const plain = await bimri(root, ["doctor"]);
  strictEqual(plain.code, 0, plain.stdout + plain.stderr);
  match(plain.stderr, new RegExp(`finished the interrupted redaction of ${fp}`));
  await finalState(root, fake, fp, run);
});
