/**
 * The terminal progress indicator: at a terminal, work that passes a second
 * shows one erasable line on stderr and erases it before the result; through
 * a pipe the same command prints exactly what it printed without it.
 */
import { ok, strictEqual } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { bimri, startRun, tempStore } from "../helpers/cli.ts";

const PROGRESS = fileURLToPath(new URL("../../commands/progress.ts", import.meta.url));
const haveScript = Deno.build.os === "linux" && (() => {
  try {
    return Deno.statSync("/usr/bin/script").isFile;
  } catch {
    return false;
  }
})();

Deno.test({
  name: "at a terminal, a long piece of work shows one line, erased before anything else prints",
  ignore: !haveScript,
  async fn() {
    const dir = await tempStore();
    const program = `${dir}/slow.ts`;
    // The work blocks the main thread, as the engine's synchronous work does.
    Deno.writeTextFileSync(
      program,
      `import { startProgress } from ${JSON.stringify(PROGRESS)};
const stop = startProgress("doctor: auditing the store");
const end = Date.now() + 1600;
while (Date.now() < end) { /* busy */ }
await stop();
console.log("RESULT");
`,
    );
    const out = await new Deno.Command("/usr/bin/script", {
      args: ["-qec", `${Deno.execPath()} run -A ${program}`, "/dev/null"],
      stdout: "piped",
      stderr: "piped",
      env: { COLUMNS: "80", LINES: "24" },
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    ok(text.includes("bimri doctor: auditing the store... 1s"), JSON.stringify(text));
    const erase = text.lastIndexOf("\r\x1b[2K");
    ok(erase !== -1 && erase < text.indexOf("RESULT"), "the line is erased before the result");
    const between = text.slice(erase + 5, text.indexOf("RESULT"));
    ok(
      !between.includes("bimri"),
      `the last line written before the result is blank: ${JSON.stringify(between)}`,
    );
  },
});

Deno.test("through a pipe, a verb with an indicator prints exactly its own output", async () => {
  const root = await tempStore();
  await startRun(root);
  const doctor = await bimri(root, ["doctor"]);
  strictEqual(doctor.code, 0, doctor.stderr);
  ok(
    !doctor.stderr.includes("\r") && !doctor.stderr.includes("\x1b"),
    JSON.stringify(doctor.stderr),
  );
  ok(
    !doctor.stdout.includes("\r") && !doctor.stdout.includes("\x1b"),
    JSON.stringify(doctor.stdout),
  );
});
