/**
 * Holds tests/ to the portability rules of issue 41: no POSIX-only pattern
 * (`.split("/")` on paths, `cp -a`, a `/bin/sh` shebang, a symbolic link
 * created without its type, a `:`-joined PATH) unless a `POSIX-only: <reason>`
 * comment marks it on the same or the previous line.
 */
import { fileURLToPath } from "node:url";
import { join, relative, sep } from "node:path";
import { deepStrictEqual, ok } from "node:assert/strict";

const TESTS = fileURLToPath(new URL("..", import.meta.url));
const SELF = fileURLToPath(import.meta.url);

/** A marker with a reason: `POSIX-only:` followed by at least one word. */
const MARKER = /POSIX-only:\s*\w/;

/** Line patterns that only work on POSIX systems, with what to use instead. */
const LINE_RULES: readonly { name: string; pattern: RegExp; instead: string }[] = [
  {
    name: "path split on a slash",
    pattern: /\.(?:split|lastIndexOf|indexOf)\(\s*(["'`])\/\1\s*\)/,
    instead: "node:path basename/dirname, or normalize() before comparing",
  },
  {
    name: "cp -a",
    pattern: /\bcp\s+-a\b|Command\(\s*["']cp["']/,
    instead: "copyTree from tests/helpers/portable.ts",
  },
  {
    name: "sh shebang",
    pattern: /#!\s*\/bin\/(?:ba)?sh\b/,
    instead: "writeStandIn from tests/helpers/portable.ts (a .cmd on Windows)",
  },
  {
    name: "PATH joined with ':'",
    pattern:
      /PATH\b[^\n]*(?:\}:\$\{|["'`]:["'`]\s*\+|\+\s*["'`]:|\.join\(\s*["'`]:["'`]\s*\))|\.join\(\s*["'`]:["'`]\s*\)[^\n]*PATH/,
    instead: "pathWithFirst from tests/helpers/portable.ts (node:path delimiter)",
  },
];

/** One unmarked POSIX-only use. */
export type Finding = { line: number; rule: string; text: string };

/** The text of the call starting at `open` (the index of its `(`), through its closing parenthesis. */
function callText(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")" && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

/** Every unmarked POSIX-only pattern in `text` (one source file). */
export function posixOnlyFindings(text: string): Finding[] {
  const lines = text.split("\n");
  const marked = (index: number) =>
    MARKER.test(lines[index]) || (index > 0 && MARKER.test(lines[index - 1]));
  const findings: Finding[] = [];
  lines.forEach((line, index) => {
    for (const rule of LINE_RULES) {
      if (rule.pattern.test(line) && !marked(index)) {
        findings.push({ line: index + 1, rule: `${rule.name} (use ${rule.instead})`, text: line });
      }
    }
  });
  // A symbolic link needs its type on Windows when the target is missing or a folder.
  for (const match of text.matchAll(/\bDeno\.symlink(?:Sync)?\s*\(/g)) {
    const call = callText(text, match.index + match[0].length - 1);
    const index = text.slice(0, match.index).split("\n").length - 1;
    if (!/\{[^}]*\btype\b/.test(call) && !marked(index)) {
      findings.push({
        line: index + 1,
        rule: 'symbolic link without a type (pass { type: "file" | "dir" })',
        text: lines[index],
      });
    }
  }
  return findings.sort((a, b) => a.line - b.line);
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    // The fixture stores are data, not test code (tests/fixtures/fixtures.ts is code).
    const data = dir === join(TESTS, "fixtures") && entry.isDirectory;
    if (entry.isDirectory && !data) out.push(...sourceFiles(path));
    else if (entry.isFile && /\.(?:ts|js|sh|py)$/.test(entry.name)) out.push(path);
  }
  return out.sort();
}

Deno.test("no test uses a POSIX-only pattern without a POSIX-only marker and reason", () => {
  const files = sourceFiles(TESTS).filter((file) => file !== SELF);
  ok(files.length > 50, `only ${files.length} test files found under ${TESTS}`);
  const report: string[] = [];
  for (const file of files) {
    for (const f of posixOnlyFindings(Deno.readTextFileSync(file))) {
      const name = relative(TESTS, file).split(sep).join("/");
      report.push(`tests/${name}:${f.line}: ${f.rule}: ${f.text.trim()}`);
    }
  }
  deepStrictEqual(report, []);
});

Deno.test("the scan finds each POSIX-only pattern and accepts a marked one", () => {
  // Built by concatenation so that this file holds none of the patterns itself.
  const slash = '"' + "/" + '"';
  const samples = [
    `const name = folder.split(${slash}).pop();`,
    `await new Deno.Command("c${"p"}", { args: ["-a", from, to] }).output();`,
    `Deno.writeTextFileSync(path, "#!/bin/${"sh"}\\necho hi\\n");`,
    "env: { PATH: `${bin}:${Deno.env.get(" + '"PATH")}` },',
    `Deno.symlinkSync(target,\n  path);`,
  ];
  deepStrictEqual(
    samples.map((s) => posixOnlyFindings(s).length),
    [1, 1, 1, 1, 1],
    samples.map((s) => JSON.stringify(posixOnlyFindings(s))).join("\n"),
  );
  deepStrictEqual(posixOnlyFindings('Deno.symlinkSync(t, p, { type: "dir" });'), []);
  deepStrictEqual(posixOnlyFindings(`// POSIX-only: mounts a tmpfs\n${samples[0]}`), []);
  deepStrictEqual(posixOnlyFindings(`${samples[2]} // POSIX-only: the stand-in on Linux`), []);
  // A marker without a reason does not count.
  deepStrictEqual(posixOnlyFindings(`// POSIX-only:\n${samples[0]}`).length, 1);
});
