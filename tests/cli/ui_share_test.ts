/**
 * The Overview of a shared store: other replicas, how many of their records
 * wait for `share pull`, and a gap when a record before them is missing.
 */
import { match, ok } from "node:assert/strict";
import { join } from "node:path";
import { must } from "../helpers/cli.ts";
import { agentSets, cloneAs, gitInit, gitOk, originAndClone, publish } from "../helpers/share.ts";
import { rawHttp, signIn, startUi } from "../helpers/ui.ts";

/** Clone a shares one key through git; clone b is cloned from the same origin, not yet pulled. */
async function sharedPair(): Promise<{ a: string; b: string }> {
  const { base, origin, first: a } = await originAndClone();
  await agentSets(a, "codex", { "task.alpha": "Alpha v1." });
  await gitInit(a); // share init needs a git work tree
  await must(a, ["share", "init", "--yes"]);
  await publish(a, "share memory");
  return { a, b: await cloneAs(base, origin, "b") };
}

Deno.test("ui overview: team memory shows waiting records and a gap", async () => {
  const { a, b } = await sharedPair();
  await must(b, ["share", "pull"]);
  await agentSets(b, "claude", { "task.beta": "Beta from b.", "task.gamma": "Gamma from b." });
  await publish(b, "b learned");
  await gitOk(a, ["pull", "-q", "--no-edit", "origin", "main"]);

  const overview = async () => {
    const ui = await startUi(a);
    try {
      const cookie = await signIn(ui);
      return (await rawHttp(ui.origin, "GET", "/", { cookie })).body;
    } finally {
      await ui.stop();
    }
  };
  const waiting = await overview();
  match(waiting, /Team memory/);
  ok(!waiting.includes("Changes for the next export"), "a clone with nothing waiting says none");
  // A session's change waits for the next export, and the card says so.
  await agentSets(a, "codex", { "task.alpha": "Alpha v2." });
  match(
    await overview(),
    /Changes for the next export<\/dt>\s*<dd>1 \(run <code>bimri share status<\/code>/,
  );
  match(waiting, /: 0 imported, 2 waiting/);
  ok(!waiting.includes("gap:"), "no gap while every record is there");

  // The first of b's records goes missing from this checkout: the second cannot be imported yet.
  const shared = join(a, ".bimri-share");
  // Record files only: each replica folder also holds its published key.json.
  const recordsIn = (name: string) => {
    try {
      return [...Deno.readDirSync(join(shared, name))].map((e) => e.name)
        .filter((file) => /^[0-9]{8}\.json$/.test(file)).sort();
    } catch {
      return [];
    }
  };
  const replicaDir = [...Deno.readDirSync(shared)].map((e) => e.name).find((name) =>
    recordsIn(name).length === 2
  );
  ok(replicaDir, "b's replica folder holds its two records");
  const first = recordsIn(replicaDir!)[0];
  Deno.removeSync(join(shared, replicaDir!, first));
  const gap = await overview();
  match(gap, /gap: a record is missing/);
  // The record after the gap still waits (counted as share status counts it).
  match(gap, /: 0 imported, 1 waiting/);
});

Deno.test("ui inbox: a replica waiting for the owner's trust is shown with its fingerprint and the terminal command, and leaves once trusted", async () => {
  const { b } = await sharedPair();
  const asked = await must(b, ["share", "pull"]);
  const [, ra, fp] = /trust replica ([a-z2-7]{26}),.*fingerprint ((?:[0-9a-f]{2}:){15}[0-9a-f]{2});/
    .exec(asked)!;
  const ui = await startUi(b);
  try {
    const cookie = await signIn(ui);
    const inbox = (await rawHttp(ui.origin, "GET", "/inbox", { cookie })).body;
    match(inbox, /Replicas waiting for your trust \(1\)/);
    // The navigation badge counts it as an open question.
    match(inbox, /aria-label="1 open questions">1</);
    const overview = (await rawHttp(ui.origin, "GET", "/", { cookie })).body;
    match(overview, /<dt>Waiting for your trust<\/dt>\s*<dd>1 replicas/);
    ok(inbox.includes(`<dd class="mono">${fp}</dd>`), inbox);
    ok(
      inbox.includes(`bimri share trust ${ra} --fingerprint ${fp} --human-approved`),
      "the exact command to answer with",
    );
    ok(!/<form[^>]*trust/i.test(inbox), "trust is never granted from the page");
    // The owner answers in a terminal; the open console sees it without a restart.
    await must(b, ["share", "trust", ra, "--fingerprint", fp, "--human-approved"]);
    const after = (await rawHttp(ui.origin, "GET", "/inbox", { cookie })).body;
    ok(!after.includes("Replicas waiting for your trust"), after);
  } finally {
    await ui.stop();
  }
});
