import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { join } from "node:path";
import { hookScript } from "../../engine/share/hooks.ts";

Deno.test("a share hook logs to a fresh temporary file, never to a name another user could plant a link at", () => {
  for (const name of ["post-merge", "pre-commit"]) {
    const text = hookScript(name, ["bimri"], "");
    ok(text.includes('log="$(mktemp "${TMPDIR:-/tmp}/bimri-hook.XXXXXX" 2>/dev/null)"'), text);
    ok(!text.includes("$$"), "no PID-named file");
    ok(text.includes('[ "$log" = /dev/null ] || rm -f "$log"'), "never removes /dev/null");
  }
});

Deno.test({
  name: "a failing share hook names the first line of bimri's error and leaves git's status alone",
  // POSIX-only: the hook is a sh script git runs with its own sh; this runs it directly.
  ignore: Deno.build.os === "windows",
  fn() {
    const dir = Deno.makeTempDirSync();
    const fake = join(dir, "fake-bimri");
    // POSIX-only: a sh stand-in for bimri, run by the sh hook (the test is ignored on Windows).
    Deno.writeTextFileSync(fake, "#!/bin/sh\necho 'BIMRI ERROR: planted failure' >&2\nexit 2\n");
    Deno.chmodSync(fake, 0o755);
    const hook = join(dir, "post-merge");
    Deno.writeTextFileSync(hook, hookScript("post-merge", [fake], ""));
    Deno.chmodSync(hook, 0o755);
    const out = new Deno.Command(hook, { cwd: dir, env: { TMPDIR: dir }, stderr: "piped" })
      .outputSync();
    assertEquals(out.code, 0);
    const stderr = new TextDecoder().decode(out.stderr);
    ok(stderr.includes("(BIMRI ERROR: planted failure)"), stderr);
    // The temporary log is gone.
    assertEquals([...Deno.readDirSync(dir)].map((e) => e.name).sort(), [
      "fake-bimri",
      "post-merge",
    ]);
    Deno.removeSync(dir, { recursive: true });
  },
});
