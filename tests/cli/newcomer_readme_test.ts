/**
 * The newcomer's first screen, run as written (issue 45): README's `deno
 * install -g` line from the checkout gives a working `bimri` command, the
 * "Try it" line runs end to end with it in a clean temporary HOME, and
 * install prints the same hint when PATH has no `bimri`.
 */
import { dirname, join } from "node:path";
import { assert, assertEquals, assertMatch, assertNotMatch } from "../helpers/assert.ts";
import { bimri, MAIN_TS, tempStore } from "../helpers/cli.ts";

const REPO = dirname(MAIN_TS);
const README = Deno.readTextFileSync(join(REPO, "README.md"));
/** Deno's module cache of this machine, so the clean HOME needs no download. */
const DENO_DIR = Deno.env.get("DENO_DIR") ?? JSON.parse(
  new TextDecoder().decode(
    new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" }).outputSync()
      .stdout,
  ),
).denoDir as string;

/** README's line for a route: the one code line that starts with `prefix`. */
function readmeLine(pattern: RegExp): string {
  const lines = README.split("\n").filter((l) => pattern.test(l));
  assertEquals(lines.length, 1, `README lines matching ${pattern}: ${lines.join(" | ")}`);
  return lines[0];
}

const CHECKOUT_ROUTE = /^deno install -g .* main\.ts$/;
const TRY_IT = /^command -v deno .*cat bimri\.md$/;

/** A clean environment: a temporary HOME, PATH with deno and the system tools only. */
async function cleanEnv(): Promise<Record<string, string>> {
  const home = await tempStore("bimri-home-");
  return {
    HOME: home,
    PATH: `${dirname(Deno.execPath())}:/usr/local/bin:/usr/bin:/bin`,
    DENO_DIR,
    TMPDIR: home,
  };
}

async function sh(line: string, cwd: string, env: Record<string, string>) {
  const out = await new Deno.Command("sh", {
    args: ["-c", line],
    cwd,
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

Deno.test({
  name: "README's checkout route installs a bimri command that runs (--version)",
  ignore: Deno.build.os === "windows",
  async fn() {
    const env = await cleanEnv();
    const installed = await sh(readmeLine(CHECKOUT_ROUTE), REPO, env);
    assertEquals(installed.code, 0, installed.stderr);
    const version = await sh(`"$HOME/.deno/bin/bimri" --version`, env.HOME, env);
    assertEquals(version.code, 0, version.stderr);
    assertMatch(
      version.stdout,
      /^bimri \S+ \(compatible engine 5\.1\.2, memory format 5\.1\.0, hot grammar 5\.0\.2\)\nVersions: /,
    );
  },
});

Deno.test({
  name: "README's Try it line runs end to end in a clean temporary HOME, through the bimri command",
  ignore: Deno.build.os === "windows",
  async fn() {
    const env = await cleanEnv();
    const r = await sh(readmeLine(TRY_IT), REPO, env);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertMatch(r.stdout, /^BIMRI 5\.1\.2 installed\.$/m);
    assertMatch(r.stdout, /^BIMRI: synced R000001; applied 1,/m);
    assertMatch(r.stdout, /\[K:checkout\.next-step\] .*Verify retry behaviour\./);
    // With bimri on PATH, install has no hint to give.
    assertNotMatch(r.stderr, /no `bimri` command on PATH/);
  },
});

Deno.test("install without bimri on PATH prints README's line for the route it runs from", async () => {
  const target = await tempStore();
  const r = await bimri(target, ["install", "--target", target], {
    env: { PATH: `${dirname(Deno.execPath())}:/usr/bin:/bin` },
  });
  assertEquals(r.code, 0, r.stderr);
  const hint = /^BIMRI: there is no `bimri` command on PATH.*\n {2}(.*)\n/m.exec(r.stderr);
  assert(hint !== null, r.stderr);
  // The same line as README's checkout route, with this checkout's absolute paths.
  const expected = readmeLine(CHECKOUT_ROUTE)
    .replace("--config deno.json", `--config ${join(REPO, "deno.json")}`)
    .replace(/ main\.ts$/, ` ${MAIN_TS}`);
  assertEquals(hint[1], expected);
});
