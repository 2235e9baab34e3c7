/**
 * The owner's console in a real browser (Debian's chromium driven by
 * playwright-core): the inbox answered with its buttons lands in the store
 * exactly as `resolve --human-approved`; hostile memory renders as text (no
 * dialog, no request leaves the console); an agent's write shows up without a
 * reload; a cross-site form cannot change anything. Screenshots of every page
 * at 1280 and 390 px go to tests/artifacts/ui/ (gitignored).
 */
import { ok, strictEqual } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import {
  bimri,
  diffTrees,
  hashTree,
  must,
  newSubject,
  startRun,
  tempStore,
} from "../helpers/cli.ts";
import { seedConflict, startUi, type UiProcess } from "../helpers/ui.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = fileURLToPath(new URL("../artifacts/ui/", import.meta.url));
const haveChromium = (() => {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
})();

/** Every request the page makes, and every dialog it opens. */
type Watch = { requests: string[]; dialogs: string[] };

async function openPage(browser: Browser, ui: UiProcess, width: number): Promise<[Page, Watch]> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  const watch: Watch = { requests: [], dialogs: [] };
  page.on("request", (request) => watch.requests.push(request.url()));
  page.on("dialog", (dialog) => {
    watch.dialogs.push(dialog.message());
    dialog.dismiss().catch(() => {});
  });
  await page.goto(ui.url);
  strictEqual(new URL(page.url()).search, "", "the token is dropped from the address bar");
  return [page, watch];
}

const PAGES: [string, string][] = [
  ["overview", "/"],
  ["memory", "/memory"],
  ["key", "/key?k=deploy.target"],
  ["inbox", "/inbox"],
  ["runs", "/runs"],
  ["run", "/runs/R000001"],
  ["health", "/health"],
];

Deno.test({
  name: "ui in a browser: pages, hostile text, live refresh, answering the inbox",
  // Linux runs it always (.ci/run installs chromium; a missing browser fails loudly there);
  // macOS and Windows runners have no /usr/bin/chromium and skip it.
  ignore: !haveChromium && Deno.build.os !== "linux",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const root = await tempStore();
    const { winner, loser } = await seedConflict(root);
    // Hostile text from an agent: markup, a javascript: link, a bidi override, a very long line.
    const hostile = await startRun(root, "evil<b>actor</b>".replace(/[<>/]/g, "-"));
    await must(root, [
      "journal",
      "--run",
      hostile,
      "--text",
      `<script>alert("journal")</script> "><img src=x onerror=alert(1)>`,
    ]);
    await must(root, ["journal", "--run", hostile, "--text", "x".repeat(4000)]);
    await must(
      root,
      newSubject(
        hostile,
        "hostile.markup",
        `"><img src=x onerror=alert(2)> <script>alert(3)</script>`,
      ),
    );
    await must(
      root,
      newSubject(
        hostile,
        "hostile.link",
        `[click me](javascript:alert(4)) <a href="javascript:alert(5)">x</a>`,
      ),
    );
    // bimri refuses bidi controls in memory text, but the reference engine accepts them: a line it
    // appended to the run log (its journal grammar) is how one still reaches the console.
    const bidi = await bimri(root, newSubject(hostile, "hostile.bidi", "invoice \u202Egpj.exe"));
    strictEqual(bidi.code, 2, "bimri refuses a bidi override in memory text");
    await Deno.writeTextFile(
      join(root, ".bimri", "log", `${hostile}.md`),
      `[ID:${hostile}-E003] [I:3] reference wrote \u202Eevil\n`,
      { append: true },
    );
    await must(root, [
      "close",
      "--run",
      hostile,
      "--outcome",
      "partial",
      "--summary",
      `<script>alert(6)</script> summary`,
    ]);
    Deno.mkdirSync(ARTIFACTS, { recursive: true });

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    const ui = await startUi(root);
    try {
      await t.step(
        "every page renders at 1280 and 390 px, nothing leaves, hostile text stays text",
        async () => {
          for (const width of [1280, 390]) {
            const [page, watch] = await openPage(browser, ui, width);
            for (
              const [name, path] of [
                ...PAGES,
                ["hostile-run", `/runs/${hostile}`] as [string, string],
              ]
            ) {
              const response = await page.goto(ui.origin + path);
              strictEqual(response?.status(), 200, path);
              await page.screenshot({ path: `${ARTIFACTS}${name}-${width}.png`, fullPage: true });
              const overflow = await page.evaluate(
                "document.documentElement.scrollWidth - window.innerWidth",
              ) as number;
              ok(overflow <= 0, `${path} at ${width}px scrolls sideways by ${overflow}px`);
            }
            await page.goto(`${ui.origin}/memory?q=alert`);
            const text = await page.textContent("main") ?? "";
            ok(
              text.includes(`"><img src=x onerror=alert(2)> <script>alert(3)</script>`),
              "markup shown as text",
            );
            ok(text.includes("javascript:alert(4)"), "a javascript: link shown as text");
            strictEqual(
              await page.locator("main img, main script, main a[href^='javascript']").count(),
              0,
            );
            await page.goto(`${ui.origin}/runs/${hostile}`);
            const log = await page.textContent("main") ?? "";
            ok(log.includes(`<script>alert("journal")</script>`), "the journal line is text");
            ok(log.includes("\\u202eevil"), "a bidi override is shown as its escape");
            ok(!log.includes("\u202E"), "no raw bidi override reaches the page");
            strictEqual(watch.dialogs.length, 0, `dialogs: ${watch.dialogs}`);
            const foreign = watch.requests.filter((url) => !url.startsWith(ui.origin + "/"));
            strictEqual(foreign.length, 0, `requests that left the console: ${foreign}`);
            await page.close();
          }
        },
      );

      await t.step(
        "keyboard: the first Tab reaches the skip link, which moves focus to the content",
        async () => {
          // 640 CSS px at device scale 2 is a 1280 px window at 200% zoom.
          const page = await browser.newPage({
            viewport: { width: 640, height: 800 },
            deviceScaleFactor: 2,
          });
          await page.goto(ui.url);
          await page.goto(`${ui.origin}/inbox`);
          await page.keyboard.press("Tab");
          strictEqual(await page.evaluate("document.activeElement.textContent"), "Skip to content");
          await page.keyboard.press("Enter");
          strictEqual(await page.evaluate("document.activeElement.id"), "content");
          await page.keyboard.press("Tab");
          strictEqual(
            await page.evaluate("document.activeElement.tagName"),
            "A",
            "links follow in order",
          );
          const overflow = await page.evaluate(
            "document.documentElement.scrollWidth - window.innerWidth",
          ) as number;
          ok(overflow <= 0, `at 200% zoom the inbox scrolls sideways by ${overflow}px`);
          await page.close();
        },
      );

      await t.step("an agent's write shows up without a reload", async () => {
        const [page] = await openPage(browser, ui, 1280);
        await page.goto(`${ui.origin}/runs/${winner}`);
        await page.evaluate(() => {
          (globalThis as unknown as { kept: boolean }).kept = true;
        });
        await must(root, [
          "journal",
          "--run",
          winner,
          "--text",
          "Live line written while the page is open",
        ]);
        await page.getByText("Live line written while the page is open").waitFor({
          timeout: 20_000,
        });
        ok(
          await page.evaluate(() => (globalThis as unknown as { kept?: boolean }).kept === true),
          "no reload",
        );
        await page.close();
      });

      await t.step("a cross-site form cannot answer, with or without a referrer", async () => {
        const before = hashTree(root);
        const form =
          `<form method="post" action="${ui.origin}/inbox/C000001/resolve"><input name="choose" value="current"><input name="approved" value="yes"><input name="confirm" value="yes"><button>go</button></form>`;
        const evil = Deno.serve(
          { hostname: "127.0.0.1", port: 0, onListen: () => {} },
          (request) => {
            const hidden = new URL(request.url).search === "?hidden";
            // The no-referrer page makes the browser send `Origin: null`.
            const meta = hidden ? '<meta name="referrer" content="no-referrer">' : "";
            return new Response(meta + form, { headers: { "content-type": "text/html" } });
          },
        );
        try {
          for (const query of ["", "?hidden"]) {
            const [page] = await openPage(browser, ui, 1280);
            await page.goto(`http://127.0.0.1:${evil.addr.port}/${query}`);
            await Promise.all([page.waitForNavigation(), page.click("button")]);
            ok((await page.textContent("body") ?? "").startsWith("Forbidden"), `refused ${query}`);
            await page.close();
          }
        } finally {
          await evil.shutdown();
        }
        strictEqual(diffTrees(before, hashTree(root)), null, "nothing changed");
      });

      await t.step("answering the inbox with its buttons records exactly that answer", async () => {
        const [page, watch] = await openPage(browser, ui, 1280);
        await page.goto(`${ui.origin}/inbox`);
        await page.getByRole("button", { name: `Choose ${loser}-Q001` }).click();
        await page.getByText("Confirm your answer to C000001").waitFor({ timeout: 5000 }).catch(
          async (error) => {
            throw new Error(`${error}\n${await page.textContent("body")}`);
          },
        );
        await page.screenshot({ path: `${ARTIFACTS}confirm-1280.png`, fullPage: true });
        await page.getByLabel("I am the owner of this memory and I chose this answer myself.")
          .check();
        await page.getByRole("button", { name: "Record this answer" }).click();
        await page.getByText(`BIMRI: C000001 resolved with ${loser}-Q001.`).waitFor();
        ok(
          (await page.textContent("main") ?? "").includes(`${loser}-Q001`),
          "the recorded answer is shown",
        );
        await page.screenshot({ path: `${ARTIFACTS}answered-1280.png`, fullPage: true });
        strictEqual(watch.dialogs.length, 0);
        await page.close();
        const got = await must(root, ["get", "--key", "deploy.target"]);
        ok(got.includes("Deploys go to ap-south"), got);
        ok(got.includes("confirmed"), got);
        const review = JSON.parse(await must(root, ["review", "--json"]));
        strictEqual(review.counts.concurrent, 0);
        const resolution = JSON.parse(
          Deno.readTextFileSync(`${root}/.bimri/resolutions/C000001.json`),
        );
        strictEqual(resolution.choice, `${loser}-Q001`);
        strictEqual((await bimri(root, ["doctor"])).code, 0);
      });
    } finally {
      await browser.close();
      await ui.stop();
    }
  },
});
