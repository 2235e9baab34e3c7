/**
 * The credential guard at every entry point: a fake credential of every kind,
 * and every character memory text refuses, is refused by the CLI, the MCP
 * tools, the Claude Code hooks and `share pull`, with exit 2 (or a tool
 * error), a `BIMRI ERROR` naming the kind and the masked value, and the store
 * byte-identical afterwards.
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
import { callTool, connectMcp, textOf } from "./mcp_support.ts";
import {
  cloneAs,
  fetchMemory,
  gitInit,
  gitOk,
  originAndClone,
  publish,
  pullTrusting,
  textOf as keyText,
} from "../helpers/share.ts";
import { handReplica } from "../helpers/share_records.ts";
import { mintReplicaId } from "../../engine/share/ids.ts";
import { sha256Hex } from "../../engine/model/text.ts";
import { parseRecordBytes, recordText } from "../../engine/share/record.ts";

/** One fake of each kind. */
const ONE_OF_EACH = (() => {
  const seen = new Map<string, ReturnType<typeof fakeCredentials>[number]>();
  for (const fake of fakeCredentials(2)) if (!seen.has(fake.kind)) seen.set(fake.kind, fake);
  return [...seen.values()];
})();

async function refusedUnchanged(
  root: string,
  args: string[],
  secret: string,
  kind: string,
  stdin?: string,
): Promise<string> {
  const before = hashTree(root);
  const r = await bimri(root, args, stdin === undefined ? {} : { stdin });
  strictEqual(r.code, 2, `${args.join(" ")}: ${r.stderr}${r.stdout}`);
  match(r.stderr, /^BIMRI ERROR: /);
  ok(r.stderr.includes(`(${kind})`), r.stderr);
  ok(r.stderr.includes(maskSecret(secret)), r.stderr);
  ok(r.stderr.includes(sha256Hex(secret)), r.stderr);
  ok(!r.stderr.includes(secret), "the refusal never repeats the secret");
  match(r.stderr, /record its name or location instead/);
  strictEqual(diffTrees(before, hashTree(root)), null, `${args.join(" ")} wrote`);
  return r.stderr;
}

Deno.test("journal, propose and close refuse a fake credential of every kind; nothing is written", async () => {
  const root = await tempStore("bimri-guard-");
  const run = await startRun(root);
  strictEqual(ONE_OF_EACH.length, 15);
  for (const fake of ONE_OF_EACH) {
    await refusedUnchanged(
      root,
      ["journal", "--run", run, "--text", fake.text],
      fake.secret,
      fake.kind,
    );
  }
  const [gh, npm, jwt, generic] = ["github-token", "npm-token", "jwt", "generic-secret"].map((k) =>
    ONE_OF_EACH.find((f) => f.kind === k)!
  );
  await refusedUnchanged(root, newSubject(run, "deploy.key", gh.text), gh.secret, gh.kind);
  await refusedUnchanged(
    root,
    newSubject(run, "deploy.key", "The deploy token is the CI secret DEPLOY_TOKEN.", [
      "--rationale",
      npm.text,
    ]),
    npm.secret,
    npm.kind,
  );
  await refusedUnchanged(
    root,
    newSubject(run, "deploy.key", "Deploys use the CI secret.", ["--question", jwt.text]),
    jwt.secret,
    jwt.kind,
  );
  await refusedUnchanged(
    root,
    ["close", "--run", run, "--outcome", "success", "--summary", generic.text],
    generic.secret,
    generic.kind,
  );
  await refusedUnchanged(
    root,
    ["recover-run", "--run", run, "--summary", gh.text],
    gh.secret,
    gh.kind,
  );
  // The next step the refusal names works.
  await must(root, [
    "journal",
    "--run",
    run,
    "--text",
    "the deploy token is the CI secret DEPLOY_TOKEN",
  ]);
});

Deno.test("memory text refuses bidi, zero-width, C1, DEL, filler and tag characters, naming them as \\uXXXX", async () => {
  const root = await tempStore("bimri-guard-chars-");
  const run = await startRun(root);
  // ... and what renders as nothing: fillers, deprecated format controls, tag characters.
  const invisible = ["\u3164", "\u206a", "\u034f", String.fromCodePoint(0xe0041)];
  for (
    const ch of [
      "\u202e",
      "\u2066",
      "\u200b",
      "\u200d",
      "\ufeff",
      "\x7f",
      "\x9b",
      "\u061c",
      ...invisible,
    ]
  ) {
    const escape = [...ch].length === ch.length
      ? "\\u" + ch.charCodeAt(0).toString(16).padStart(4, "0")
      : "\\u" + ch.charCodeAt(0).toString(16) + "\\u" + ch.charCodeAt(1).toString(16);
    for (
      const args of [
        ["journal", "--run", run, "--text", `ab${ch}cd`],
        newSubject(run, "a.b", `ab${ch}cd`),
        ["close", "--run", run, "--summary", `ab${ch}cd`],
      ]
    ) {
      const before = hashTree(root);
      const r = await bimri(root, args);
      strictEqual(r.code, 2, `${escape}: ${r.stderr}`);
      ok(
        r.stderr.includes(`character ${escape} at character 2`),
        `${args[0]} ${escape}: ${r.stderr}`,
      );
      ok(!r.stderr.includes(ch), "the refusal shows the character escaped");
      strictEqual(diffTrees(before, hashTree(root)), null, `${args[0]} wrote`);
    }
  }
});

Deno.test("MCP tools return the same refusal as a tool error and write nothing", async () => {
  const root = await tempStore("bimri-guard-mcp-");
  const mcp = await connectMcp(root);
  try {
    const start = await callTool(mcp, "memory_start", { actor: "claude" });
    strictEqual(start.isError ?? false, false);
    const run = /R\d{6}/.exec(textOf(start))![0];
    for (const fake of ONE_OF_EACH) {
      for (
        const [tool, args, argv] of [
          ["memory_journal", { text: fake.text }, ["journal", "--run", run, "--text", fake.text]],
          [
            "memory_propose",
            { key: "deploy.key", text: fake.text, tier: 2, new_subject: true },
            newSubject(run, "deploy.key", fake.text),
          ],
        ] as [string, Record<string, unknown>, string[]][]
      ) {
        const before = hashTree(root);
        const result = await callTool(mcp, tool, args);
        strictEqual(result.isError, true, `${tool}: ${textOf(result)}`);
        ok(textOf(result).includes(`(${fake.kind})`), textOf(result));
        ok(!textOf(result).includes(fake.secret));
        strictEqual(diffTrees(before, hashTree(root)), null, `${tool} wrote`);
        const cli = await bimri(root, argv);
        strictEqual(textOf(result).trim(), cli.stderr.trim(), tool);
      }
    }
  } finally {
    await mcp.close();
  }
});

Deno.test("hooks refuse a credential in a stored payload field; nothing is written", async () => {
  const root = await tempStore("bimri-guard-hooks-");
  await must(root, ["status"]);
  const gh = ONE_OF_EACH.find((f) => f.kind === "github-token")!;
  await refusedUnchanged(
    root,
    ["hook-start"],
    gh.secret,
    gh.kind,
    JSON.stringify({ session_id: `session ${gh.secret}` }),
  );
  await must(root, ["hook-start"], { stdin: JSON.stringify({ session_id: "s-1" }) });
  const slack = ONE_OF_EACH.find((f) => f.kind === "slack-token")!;
  await refusedUnchanged(
    root,
    ["hook-close"],
    slack.secret,
    slack.kind,
    JSON.stringify({ session_id: "s-1", reason: slack.text }),
  );
  const closed = await must(root, ["hook-close"], {
    stdin: JSON.stringify({ session_id: "s-1", reason: "logout" }),
  });
  match(closed, /closed/);
});

Deno.test("share pull refuses a record holding a credential: nothing of it enters memory", async () => {
  const { base, origin, first: a } = await originAndClone();
  await gitInit(a); // share init needs a git work tree
  await must(a, ["share", "init", "--yes"]);
  await publish(a, "share memory");
  const b = await cloneAs(base, origin, "b");
  await must(b, ["share", "pull"]);
  // Clone a's owner allowed the fake key locally (its policy file is not published here).
  const gh = ONE_OF_EACH.find((f) => f.kind === "github-token")!;
  Deno.writeTextFileSync(
    join(a, ".bimri-secrets.json"),
    JSON.stringify({
      bimri_secrets: 1,
      allowed: [{ fingerprint: sha256Hex(gh.secret), allowed_at: "now" }],
      disabled_rules: [],
    }),
  );
  const run = await startRun(a);
  await must(a, newSubject(run, "deploy.key", gh.text));
  await must(a, ["close", "--run", run, "--outcome", "success"]);
  await publish(a, "a learned a secret");
  await gitOk(b, ["pull", "-q", "--no-edit", "origin", "main"]);
  const memory = hashTree(join(b, ".bimri"));
  const r = await bimri(b, ["share", "pull"]);
  ok(r.stderr.includes("BIMRI ERROR: share record .bimri-share/"), r.stderr);
  ok(r.stderr.includes("(github-token)"), r.stderr);
  ok(r.stderr.includes(maskSecret(gh.secret)), r.stderr);
  ok(!r.stderr.includes(gh.secret) && !r.stdout.includes(gh.secret));
  strictEqual(await keyText(b, "deploy.key"), null);
  // Memory itself is untouched: only the share bookkeeping may differ.
  const changed = [...hashTree(join(b, ".bimri"))].filter(([k, v]) => memory.get(k) !== v)
    .map(([k]) => k).filter((k) => !k.startsWith("share/"));
  deepStrictEqual(changed, []);
});

Deno.test("share pull refuses a record whose text hides a bidi override; output shows it escaped", async () => {
  const { base, origin, first: a } = await originAndClone();
  await gitInit(a); // share init needs a git work tree
  await must(a, ["share", "init", "--yes"]);
  await publish(a, "share memory");
  const b = await cloneAs(base, origin, "b");
  await pullTrusting(b); // the owner trusts a's replica
  const run = await startRun(a);
  await must(a, newSubject(run, "team.rule", "Deploy on Fridays."));
  await must(a, ["close", "--run", run, "--outcome", "success"]);
  await publish(a, "a learned");
  await fetchMemory(b);
  strictEqual(await keyText(b, "team.rule"), "Deploy on Fridays.");
  // A teammate's replica the owner trusts writes a record whose text hides a
  // bidi override: signed and trusted, so only the text guard can refuse it.
  const share = join(a, ".bimri-share");
  const ra = JSON.parse(Deno.readTextFileSync(join(a, ".bimri", "replica.local.json"))).replica;
  const names = [...Deno.readDirSync(join(share, ra))].map((e) => e.name)
    .filter((name) => /^[0-9]{8}\.json$/.test(name)).sort();
  const template = parseRecordBytes(
    Deno.readFileSync(join(share, ra, names[names.length - 1])),
    ra,
    names.length,
  );
  ok(template.entry !== null);
  const hand = handReplica(share, mintReplicaId());
  const hostile = hand.sign({
    ...template,
    replica: hand.replica,
    seq: 1,
    key: "team.hidden",
    entry: { ...template.entry, text: "Deploy on \u202eFridays." },
    replaces: null,
    resolves: [],
    vector: { [ra]: names.length },
  });
  Deno.writeTextFileSync(join(share, hand.replica, "00000001.json"), recordText(hostile));
  await publish(a, "a hostile record");
  await gitOk(b, ["pull", "-q", "--no-edit", "origin", "main"]);
  await must(b, ["share", "trust", hand.replica, "--human-approved"]);
  const memory = hashTree(join(b, ".bimri"));
  const r = await bimri(b, ["share", "pull"]);
  ok(r.stderr.includes("BIMRI ERROR: share record .bimri-share/"), r.stderr);
  match(r.stderr, /direction-changing character \\u202e, which memory text refuses/);
  ok(!(r.stdout + r.stderr).includes("\u202e"), "no raw bidi override is printed");
  strictEqual(await keyText(b, "team.hidden"), null);
  const changed = [...hashTree(join(b, ".bimri"))].filter(([k, v]) => memory.get(k) !== v)
    .map(([k]) => k).filter((k) => !k.startsWith("share/"));
  deepStrictEqual(changed, []);
});
