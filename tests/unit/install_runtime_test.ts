import { assertEquals } from "../helpers/assert.ts";
import { currentRuntimePrefix, sentinelAnswer } from "../../engine/install/runtime.ts";
import { RUN_PERMISSIONS } from "../../engine/install/permissions.ts";
import { RUN_V8_FLAGS } from "../../engine/install/v8_flags.ts";
import { commandPrefix, RUN_PERMISSIONS as TEST_PERMISSIONS, tempStore } from "../helpers/cli.ts";
import { fileURLToPath } from "node:url";

Deno.test("runtime prefix: compiled binary, URL, checkout with deno.json", () => {
  assertEquals(
    currentRuntimePrefix("/opt/bin/bimri", "file:///tmp/deno-compile-bimri/main.ts"),
    { kind: "compiled", argv: ["/opt/bin/bimri"] },
  );
  assertEquals(
    currentRuntimePrefix(
      "C:\\bin\\bimri.exe",
      "file:///C:/Users/x/AppData/deno-compile-bimri/main.ts",
    )
      .argv,
    ["C:\\bin\\bimri.exe"],
  );
  assertEquals(currentRuntimePrefix("/usr/bin/deno", "https://example.test/bimri/main.ts"), {
    kind: "deno-run",
    argv: [
      "/usr/bin/deno",
      "run",
      "--quiet",
      ...RUN_V8_FLAGS,
      "--no-config",
      "--unstable-lazy-dynamic-imports",
      ...RUN_PERMISSIONS,
      "https://example.test/bimri/main.ts",
    ],
  });
  const main = new URL("../../main.ts", import.meta.url).href;
  const local = currentRuntimePrefix("/usr/bin/deno", main);
  assertEquals(local.argv, [
    "/usr/bin/deno",
    "run",
    "--quiet",
    ...RUN_V8_FLAGS,
    "--config",
    fileURLToPath(new URL("../../deno.json", import.meta.url)),
    ...RUN_PERMISSIONS,
    fileURLToPath(main),
  ]);
});

Deno.test("one permission list and one V8 flag list for the binary, the tests and the binding", () => {
  assertEquals([...RUN_PERMISSIONS], [...TEST_PERMISSIONS]);
  // The tests' CLI runs under the binding's V8 flags (a code cache is only reused under the same flags).
  const testPrefix = commandPrefix();
  if (!Deno.env.get("BIMRI_CMD")) {
    assertEquals(testPrefix.slice(2, 3 + RUN_V8_FLAGS.length), ["--quiet", ...RUN_V8_FLAGS]);
  }
  const tasks = JSON.parse(Deno.readTextFileSync(new URL("../../deno.json", import.meta.url)))
    .tasks as Record<string, string>;
  for (const [name, task] of Object.entries(tasks)) {
    if (name.startsWith("compile:")) {
      assertEquals(task.includes(RUN_PERMISSIONS.join(" ")), true, name);
      assertEquals(task.startsWith(`deno compile ${RUN_V8_FLAGS.join(" ")} `), true, name);
    }
  }
  assertEquals(
    sentinelAnswer("0".repeat(32)),
    `{"bimri_release":"${
      JSON.parse(sentinelAnswer("0".repeat(32))).bimri_release
    }","compatible_engine":"5.1.2","hot_grammar":"5.0.2","memory_format":"5.1.0","sentinel":"${
      "0".repeat(32)
    }"}\n`,
  );
});

Deno.test("a prefix that is silent, wrong or relative is refused before anything is written", async () => {
  const { verifyRuntimePrefix } = await import("../../engine/install/runtime.ts");
  const { installProject } = await import("../../engine/install/install.ts");
  const { BimriError } = await import("../../engine/errors.ts");
  const target = await tempStore("bimri-runtime-check-");
  const cases: [string[], RegExp][] = [
    [["/bin/true"], /printed nothing/],
    [["/bin/echo"], /not the expected sentinel/],
    [["/bin/false"], /exited with 1/],
    [["bimri"], /not absolute/],
    [["/nonexistent/bimri"], /does not exist/],
  ];
  for (const [argv, pattern] of cases) {
    if (argv[0].startsWith("/bin/") && (await Deno.lstat(argv[0]).catch(() => null)) === null) {
      continue; // not every platform has /bin/true and friends
    }
    let error: unknown = null;
    try {
      await verifyRuntimePrefix({ kind: "compiled", argv }, target, 10_000);
    } catch (e) {
      error = e;
    }
    assertEquals(error instanceof BimriError && pattern.test(error.message), true, String(error));
  }
  let refused: unknown = null;
  try {
    await installProject({
      target: `${target}/project`,
      quiescent: false,
      prefix: { kind: "compiled", argv: ["/nonexistent/bimri"] },
    });
  } catch (e) {
    refused = e;
  }
  assertEquals(refused instanceof BimriError, true);
  assertEquals([...Deno.readDirSync(target)], []);
});
