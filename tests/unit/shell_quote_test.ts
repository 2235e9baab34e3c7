/**
 * Printed commands are quoted for the shell of the OS they run on, with the
 * OS injected: install's "Verified runtime" line (printablePrefix) in POSIX
 * single quotes, and on Windows in double quotes cmd.exe and PowerShell pass
 * on as one argument each.
 */
import { strictEqual } from "node:assert/strict";
import { commandLineFor, posixQuote, windowsQuote } from "../../engine/install/shell_quote.ts";
import { printablePrefix } from "../../engine/install/report.ts";

/** How a Windows program splits its command line (CommandLineToArgvW's rules for arguments). */
function splitWindows(line: string): string[] {
  const args: string[] = [];
  let i = 0;
  while (i < line.length) {
    while (line[i] === " ") i++;
    if (i >= line.length) break;
    let arg = "";
    let quoted = false;
    for (; i < line.length && (quoted || line[i] !== " "); i++) {
      if (line[i] === "\\") {
        let n = 0;
        while (line[i] === "\\") n++, i++;
        if (line[i] === '"') {
          arg += "\\".repeat(Math.floor(n / 2));
          if (n % 2 === 1) arg += '"';
          else quoted = !quoted;
        } else {
          arg += "\\".repeat(n);
          i--;
        }
      } else if (line[i] === '"') quoted = !quoted;
      else arg += line[i];
    }
    args.push(arg);
  }
  return args;
}

const DENO = "C:\\Program Files\\deno\\deno.exe";
const MAIN = "C:\\Users\\Ann O'Neil\\bimri\\main.ts";
const V8 =
  "--v8-flags=--max-semi-space-size=8,--min-semi-space-size=2,--heap-growing-percent=20,--baseline-batch-compilation-threshold=65536";

Deno.test("POSIX: bare words stay bare, anything else in single quotes", () => {
  strictEqual(posixQuote("/usr/bin/deno"), "/usr/bin/deno");
  strictEqual(posixQuote(V8), V8);
  strictEqual(posixQuote("/home/ann/my bimri/main.ts"), "'/home/ann/my bimri/main.ts'");
  strictEqual(posixQuote("it's"), "'it'\\''s'");
  strictEqual(
    printablePrefix(["/usr/bin/deno", "run", "/srv/a b/main.ts"], "linux"),
    "/usr/bin/deno run '/srv/a b/main.ts'",
  );
});

Deno.test("Windows: paths in double quotes, never single quotes; each argument splits back exactly", () => {
  const argv = [DENO, "run", V8, "--allow-read", MAIN, 'say "hi"', "C:\\trailing\\ dir\\"];
  const line = printablePrefix(argv, "windows");
  strictEqual(
    line,
    `"C:\\Program Files\\deno\\deno.exe" run "${V8}" --allow-read "C:\\Users\\Ann O'Neil\\bimri\\main.ts" "say \\"hi\\"" "C:\\trailing\\ dir\\\\"`,
  );
  strictEqual(JSON.stringify(splitWindows(line)), JSON.stringify(argv));
  strictEqual(windowsQuote("C:\\deno\\deno.exe"), "C:\\deno\\deno.exe");
  // cmd.exe's % and PowerShell's $ , @ are never left bare.
  for (const arg of ["100%", "$HOME", "a,b", "@args", "a&b"]) {
    strictEqual(windowsQuote(arg), `"${arg}"`, arg);
  }
});

Deno.test("the command line follows the OS family", () => {
  const argv = ["deno", "run", "a b"];
  strictEqual(commandLineFor(argv, "darwin"), "deno run 'a b'");
  strictEqual(commandLineFor(argv, "windows"), 'deno run "a b"');
});
