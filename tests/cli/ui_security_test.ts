/**
 * `bimri ui` refuses what is not the owner's own page: a non-loopback
 * --host, requests without the launch's token or cookie, a foreign Host (DNS
 * rebinding) or Origin, cross-site and token-less POSTs, and every POST of a
 * --read-only console; the store stays byte for byte unchanged.
 */
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import {
  bimri,
  diffTrees,
  hashTree,
  must,
  pathExists,
  startRun,
  tempStore,
} from "../helpers/cli.ts";
import { rawHttp, seedConflict, signIn, startUi } from "../helpers/ui.ts";

Deno.test("ui refuses a --host that is not loopback, before serving anything", async () => {
  const root = await tempStore();
  await seedConflict(root);
  for (const host of ["0.0.0.0", "192.168.1.5", "example.com", "::"]) {
    const result = await bimri(root, ["ui", "--host", host]);
    strictEqual(result.code, 2, `${host}: ${result.stderr}`);
    match(result.stderr, /^BIMRI ERROR: ui: --host .* is not a loopback address/m);
    strictEqual(result.stdout, "");
  }
  if (!Deno.env.get("BIMRI_CMD")) {
    // The plain CLI runs without network permission: the console says how to grant loopback.
    const result = await bimri(root, ["ui"]);
    strictEqual(result.code, 2);
    match(
      result.stderr,
      /^BIMRI ERROR: bimri ui must listen on 127\.0\.0\.1.*--allow-net=127\.0\.0\.1/m,
    );
  }
});

/** The session cookie and the form token, got the way a browser gets them. */
async function session(origin: string, url: string): Promise<{ cookie: string; csrf: string }> {
  const path = new URL(url).pathname + new URL(url).search;
  const exchange = await rawHttp(origin, "GET", path, {});
  strictEqual(exchange.status, 303);
  strictEqual(exchange.headers.get("location"), "/");
  const setCookie = exchange.headers.get("set-cookie") ?? "";
  match(setCookie, /; HttpOnly; SameSite=Strict; Path=\//);
  const cookie = setCookie.split(";")[0];
  const inbox = await rawHttp(origin, "GET", "/inbox", { cookie });
  strictEqual(inbox.status, 200);
  const csrf = /name="csrf" value="([^"]+)"/.exec(inbox.body)?.[1] ?? "";
  ok(csrf.length > 20, "the inbox form carries a CSRF token");
  return { cookie, csrf };
}

Deno.test("ui: token, cookie, Host, Origin and CSRF checks; strict headers", async () => {
  const root = await tempStore();
  await seedConflict(root);
  const ui = await startUi(root);
  try {
    const { origin } = ui;
    strictEqual((await rawHttp(origin, "GET", "/", {})).status, 403, "no cookie");
    const wrong = await rawHttp(origin, "GET", "/?token=not-the-token", {});
    strictEqual(wrong.status, 403, "wrong token");
    strictEqual(wrong.headers.get("set-cookie"), null);
    const { cookie, csrf } = await session(origin, ui.url);
    const home = await rawHttp(origin, "GET", "/", { cookie });
    strictEqual(home.status, 200);
    const csp = home.headers.get("content-security-policy") ?? "";
    match(csp, /default-src 'none'/);
    match(csp, /frame-ancestors 'none'/);
    ok(!/https?:|\*/.test(csp), `no external source in ${csp}`);
    strictEqual(home.headers.get("x-frame-options"), "DENY");
    strictEqual(home.headers.get("x-content-type-options"), "nosniff");
    strictEqual(home.headers.get("referrer-policy"), "no-referrer");
    ok(!/<script>|\son[a-z]+=|style="/.test(home.body), "no inline script, handler or style");
    const port = new URL(origin).port;
    const rebound = await rawHttp(origin, "GET", "/", { cookie, host: `evil.example:${port}` });
    strictEqual(rebound.status, 403, "a foreign Host (DNS rebinding)");
    const foreign = await rawHttp(origin, "GET", "/", { cookie, origin: "http://evil.example" });
    strictEqual(foreign.status, 403, "a foreign Origin");
    strictEqual((await rawHttp(origin, "PUT", "/", { cookie, origin })).status, 405);

    const before = hashTree(root);
    const form = (extra: Record<string, string> = {}) =>
      new URLSearchParams({
        csrf,
        choose: "current",
        seen: "x",
        approved: "yes",
        confirm: "yes",
        ...extra,
      })
        .toString();
    const post = (headers: Record<string, string>, body = form()) =>
      rawHttp(origin, "POST", "/inbox/C000001/resolve", {
        "content-type": "application/x-www-form-urlencoded",
        ...headers,
      }, body);
    strictEqual(
      (await post({ cookie, origin: "http://evil.example" })).status,
      403,
      "cross-origin POST",
    );
    strictEqual(
      (await post({ cookie, origin: `http://127.0.0.1:${Number(port) + 1}` })).status,
      403,
      "another port",
    );
    strictEqual((await post({ cookie })).status, 403, "a POST without Origin");
    strictEqual(
      (await post({ cookie, origin, "sec-fetch-site": "cross-site" })).status,
      403,
      "cross-site",
    );
    strictEqual(
      (await post({ cookie, origin }, form({ csrf: "forged" }))).status,
      403,
      "a wrong CSRF token",
    );
    strictEqual((await post({ origin }, form())).status, 403, "no cookie");
    strictEqual(diffTrees(before, hashTree(root)), null, "a refused request wrote nothing");
  } finally {
    await ui.stop();
  }
});

Deno.test("ui --read-only serves no form and refuses every POST", async () => {
  const root = await tempStore();
  await seedConflict(root);
  const ui = await startUi(root, ["--read-only"]);
  try {
    const { origin } = ui;
    const cookie = await signIn(ui);
    const before = hashTree(root);
    for (const page of ["/", "/inbox", "/inbox/C000001", "/memory", "/runs", "/health"]) {
      const response = await rawHttp(origin, "GET", page, { cookie });
      strictEqual(response.status, 200, page);
      ok(!/<form[^>]*method="post"/i.test(response.body), `${page} serves no form`);
    }
    const inbox = await rawHttp(origin, "GET", "/inbox", { cookie });
    match(inbox.body, /bimri resolve C000001 --choose/);
    for (const step of ["confirm", "resolve"]) {
      const refused = await rawHttp(origin, "POST", `/inbox/C000001/${step}`, {
        cookie,
        origin,
        "content-type": "application/x-www-form-urlencoded",
      }, "choose=current&approved=yes&confirm=yes");
      strictEqual(refused.status, 403, step);
    }
    strictEqual(diffTrees(before, hashTree(root)), null, "the read-only console wrote nothing");
    const review = await bimri(root, ["review", "--json"]);
    deepStrictEqual(JSON.parse(review.stdout).counts.concurrent, 1);
  } finally {
    await ui.stop();
  }
});

/** Posts an answer to C000001 the way the console's confirmation form does. */
async function answerAs(root: string, change: (loser: string) => Promise<void>) {
  const { loser } = await seedConflict(root);
  const ui = await startUi(root);
  try {
    const { origin } = ui;
    const { cookie, csrf } = await session(origin, ui.url);
    const inbox = await rawHttp(origin, "GET", "/inbox", { cookie });
    const seen = /name="seen" value="([^"]+)"/.exec(inbox.body)?.[1] ?? "";
    await change(loser);
    const before = hashTree(root);
    const response = await rawHttp(
      origin,
      "POST",
      "/inbox/C000001/resolve",
      {
        cookie,
        origin,
        "content-type": "application/x-www-form-urlencoded",
      },
      new URLSearchParams({ csrf, seen, choose: `${loser}-Q001`, approved: "yes", confirm: "yes" })
        .toString(),
    );
    return { response, unchanged: diffTrees(before, hashTree(root)) === null };
  } finally {
    await ui.stop();
  }
}

Deno.test("ui: an answer after the live value changed gets the engine's refusal", async () => {
  const root = await tempStore();
  const { response, unchanged } = await answerAs(root, async () => {
    const other = await startRun(root, "gemini", ["--session", "s-other"]);
    await must(root, [
      "propose",
      "--run",
      other,
      "--key",
      "deploy.target",
      "--text",
      "Deploys go nowhere",
    ]);
    await must(root, ["sync", "--run", other]);
  });
  strictEqual(response.status, 409);
  match(
    response.body,
    /The engine refused this answer: memory changed after this question was raised\./,
  );
  ok(unchanged, "nothing recorded");
  strictEqual(pathExists(`${root}/.bimri/resolutions/C000001.json`), false);
});

Deno.test("ui: an answer to a question already answered in a terminal leaves that answer", async () => {
  const root = await tempStore();
  const { response } = await answerAs(root, async () => {
    await must(root, ["resolve", "C000001", "--choose", "current", "--human-approved"]);
  });
  match(response.body, /BIMRI: C000001 already resolved as current\./);
  const resolution = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/resolutions/C000001.json`));
  strictEqual(resolution.choice, "current");
});
