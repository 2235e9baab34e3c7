/** The console's pure parts: escaping, word diff, loopback hosts and the request guard. */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { diffHtml, escapeHtml, html, untrusted, wordDiff } from "../../ui/html.ts";
import {
  cookieValue,
  isLoopbackHost,
  judge,
  newGuard,
  type RequestFacts,
} from "../../ui/security.ts";

Deno.test("html escapes every interpolated string and shows bidi controls as escapes", () => {
  const hostile = `"><img src=x onerror=alert(1)><script>alert('x')</script>`;
  const out = html`<p title="${hostile}">${hostile}</p>`.markup;
  ok(!out.includes("<img") && !out.includes("<script"), out);
  strictEqual(escapeHtml(`<a href='x'>&"`), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;");
  strictEqual(untrusted("a\u202Eb\u200Bc").markup, "a\\u202eb\\u200bc");
  strictEqual(html`${"x\u2066y"}`.markup, "x\\u2066y");
});

Deno.test("wordDiff keeps common words and marks the changed ones", () => {
  deepStrictEqual(wordDiff("Deploys go to eu-west", "Deploys go to us-east now"), [
    { kind: "same", text: "Deploys go to " },
    { kind: "del", text: "eu-west" },
    { kind: "add", text: "us-east now" },
  ]);
  deepStrictEqual(wordDiff("same", "same"), [{ kind: "same", text: "same" }]);
  strictEqual(diffHtml("a <b>", "a <i>").markup, "a <del>&lt;b&gt;</del><ins>&lt;i&gt;</ins>");
});

Deno.test("only loopback addresses count as loopback", () => {
  for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]) {
    ok(isLoopbackHost(host), host);
  }
  for (
    const host of ["0.0.0.0", "::", "10.0.0.1", "127.0.0.256", "localhost.evil.com", "128.0.0.1"]
  ) {
    ok(!isLoopbackHost(host), host);
  }
});

Deno.test("the guard: token exchange, cookie, Host, Origin, Sec-Fetch-Site and methods", () => {
  const guard = newGuard("127.0.0.1", 4000);
  const cookie = `${guard.cookieName}=${guard.session}`;
  const base: RequestFacts = {
    method: "GET",
    path: "/",
    host: "127.0.0.1:4000",
    origin: null,
    secFetchSite: null,
    cookie,
    token: null,
  };
  const kind = (facts: Partial<RequestFacts>) => {
    const verdict = judge(guard, { ...base, ...facts });
    return verdict.kind === "refuse" ? verdict.status : verdict.kind;
  };
  strictEqual(kind({}), "allow");
  strictEqual(kind({ host: "localhost:4000" }), "allow");
  strictEqual(kind({ cookie: null }), 403);
  strictEqual(kind({ cookie: `${guard.cookieName}=wrong` }), 403);
  strictEqual(kind({ cookie: null, token: guard.token }), "exchange");
  strictEqual(kind({ cookie: null, token: "nope" }), 403);
  strictEqual(kind({ host: "evil.example:4000" }), 403);
  strictEqual(kind({ host: "127.0.0.1:4001" }), 403);
  strictEqual(kind({ host: null }), 403);
  strictEqual(kind({ origin: "http://evil.example" }), 403);
  strictEqual(kind({ secFetchSite: "cross-site" }), 403);
  strictEqual(kind({ method: "DELETE" }), 405);
  strictEqual(kind({ method: "POST", origin: "http://127.0.0.1:4000" }), "allow");
  strictEqual(kind({ method: "POST" }), 403);
  strictEqual(kind({ method: "POST", origin: "null", secFetchSite: "same-site" }), 403);
  strictEqual(kind({ method: "POST", origin: "null", secFetchSite: "same-origin" }), "allow");
  strictEqual(cookieValue("a=1; b=2", "b"), "2");
  strictEqual(cookieValue("ab=1", "b"), null);
});
