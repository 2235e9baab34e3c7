/**
 * A recovery review in the console: the preserved direct edit of bimri.md is
 * shown line by line against accepted memory, and keeping the accepted
 * memory is recorded as `resolve --choose current --human-approved` records it.
 */
import { match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { bimri, must, newSubject, startRun, tempStore } from "../helpers/cli.ts";
import { rawHttp, signIn, startUi } from "../helpers/ui.ts";

Deno.test("ui: a recovery review shows the preserved edit and keeping current answers it", async () => {
  const root = await tempStore();
  const run = await startRun(root);
  await must(root, newSubject(run, "deploy.target", "Deploys go to eu-west"));
  await must(root, ["sync", "--run", run]);
  const view = join(root, "bimri.md");
  Deno.writeTextFileSync(
    view,
    Deno.readTextFileSync(view).replace("Deploys go to eu-west", "Deploys go to <b>MARS</b>"),
  );
  await must(root, ["sync", "--run", run]);
  const ui = await startUi(root);
  try {
    const { origin } = ui;
    const cookie = await signIn(ui);
    const inbox = (await rawHttp(origin, "GET", "/inbox", { cookie })).body;
    match(inbox, /Recovery review/);
    match(inbox, /Preserved edit/);
    match(inbox, /<ins>[^<]*Deploys go to &lt;b&gt;MARS&lt;\/b&gt;[^<]*<\/ins>/);
    match(inbox, /<del>[^<]*Deploys go to eu-west[^<]*<\/del>/);
    const csrf = /name="csrf" value="([^"]+)"/.exec(inbox)?.[1] ?? "";
    const seen = /name="seen" value="([^"]+)"/.exec(inbox)?.[1] ?? "";
    const form = new URLSearchParams({
      csrf,
      seen,
      choose: "current",
      approved: "yes",
      confirm: "yes",
    });
    const answered = await rawHttp(origin, "POST", "/inbox/C000001/resolve", {
      cookie,
      origin,
      "content-type": "application/x-www-form-urlencoded",
    }, form.toString());
    strictEqual(answered.status, 200, answered.body);
    match(answered.body, /BIMRI: C000001 resolved with current\./);
  } finally {
    await ui.stop();
  }
  const review = JSON.parse(await must(root, ["review", "--all", "--json"]));
  strictEqual(review.counts.recovery, 0);
  const got = await must(root, ["get", "--key", "deploy.target"]);
  ok(got.includes("Deploys go to eu-west"), got);
  strictEqual((await bimri(root, ["doctor"])).code, 0);
});
