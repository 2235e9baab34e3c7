/**
 * Helpers for the distribution tests: the repository layout, the permission
 * flags declared by deno.json's compile tasks, a process runner for any
 * command prefix (source, bundle, URL) and the smoke session they all replay.
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";

/** Absolute path of the repository checkout. */
export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The five compile targets the release ships (deno.json task name suffixes). */
export const COMPILE_TARGETS: readonly string[] = [
  "linux-x64",
  "linux-arm64",
  "macos-x64",
  "macos-arm64",
  "windows-x64",
];

/** deno.json's `tasks` table. */
export function denoTasks(): Record<string, string> {
  const config = JSON.parse(Deno.readTextFileSync(join(REPO_ROOT, "deno.json")));
  return config.tasks as Record<string, string>;
}

/** The permission flags (`--allow-*`, `--deny-*`) of one task's command line, in order. */
export function permissionFlags(taskCommand: string): string[] {
  return taskCommand.split(/\s+/).filter((word) =>
    word.startsWith("--allow-") || word.startsWith("--deny-")
  );
}

/** Result of one child process. */
export type ProcessResult = { code: number; stdout: string; stderr: string };

/** Options for one child process. */
export type ProcessOptions = { cwd?: string; env?: Record<string, string>; stdin?: string };

/** Runs `command args...` and captures its output (the environment is inherited plus `env`). */
export async function runProcess(
  command: string,
  args: string[],
  options: ProcessOptions = {},
): Promise<ProcessResult> {
  const child = new Deno.Command(command, {
    args,
    cwd: options.cwd,
    env: { NO_COLOR: "1", TZ: "UTC", ...(options.env ?? {}) },
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const out = await child.output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** The verbs the checkout's CLI registers, read from `bimri --help` of the source tree. */
export async function registeredVerbs(permissions: string[]): Promise<Set<string>> {
  const help = await runProcess(Deno.execPath(), [
    "run",
    "--quiet",
    ...permissions,
    join(REPO_ROOT, "main.ts"),
    "--help",
  ]);
  assertEquals(help.code, 0, help.stderr);
  const verbs = new Set<string>();
  const section = help.stdout.split(/^Commands:$/m)[1]?.split(/^\S/m)[0] ?? "";
  for (const match of section.matchAll(/^ {2}([a-z][a-z-]*)\s/gm)) verbs.add(match[1]);
  return verbs;
}

/** One step of the smoke session and what it printed. */
export type SmokeStep = { args: string[]; result: ProcessResult };

/** Pinned clock for the smoke session, so two engines write byte-identical stores. */
export const SMOKE_NOW = "2026-03-04T05:06:07Z";

/**
 * Replays the black-box smoke session (start, journal, propose, sync, close,
 * status, doctor) with the CLI given as `prefix` (command and leading args),
 * against the store at `root`. Propose and sync run when `verbs` has them.
 * The run handle is the one start prints (R000001 in a fresh store). Every
 * step must exit 0; returns the steps for comparison.
 */
export async function smokeSession(
  prefix: string[],
  root: string,
  verbs: Set<string>,
  env: Record<string, string> = {},
): Promise<SmokeStep[]> {
  const [command, ...lead] = prefix;
  const invoke = async (args: string[]): Promise<SmokeStep> => {
    const result = await runProcess(command, [...lead, "--root", root, ...args], {
      cwd: root,
      env: { BIMRI_NOW: SMOKE_NOW, ...env },
    });
    assertEquals(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
    return { args, result };
  };
  const steps: SmokeStep[] = [await invoke(["start", "--actor", "codex"])];
  const handle = /^BIMRI RUN HANDLE: (R[0-9]{6})$/m.exec(steps[0].result.stdout)?.[1];
  assert(handle, `start printed no run handle: ${steps[0].result.stdout}`);
  const session: string[][] = [
    ["journal", "--run", handle, "--text", "Retries reuse the idempotency key."],
  ];
  if (verbs.has("propose") && verbs.has("sync")) {
    session.push(
      [
        "propose",
        "--run",
        handle,
        "--tier",
        "2",
        "--new-subject",
        "--key",
        "checkout.next-step",
        "--text",
        "Verify retry behaviour.",
      ],
      ["sync", "--run", handle],
    );
  }
  session.push(
    ["close", "--run", handle, "--outcome", "success", "--summary", "Smoke done."],
    ["status"],
  );
  if (verbs.has("doctor")) session.push(["doctor"]);
  for (const args of session) steps.push(await invoke(args));
  assertEquals(steps[1].result.stdout, `${handle}-E001\n`);
  const closed = steps.find((s) => s.args[0] === "close");
  assertMatch(closed?.result.stdout ?? "", new RegExp(`^BIMRI: run ${handle} closed\\.$`, "m"));
  if (verbs.has("propose") && verbs.has("sync")) {
    const view = Deno.readTextFileSync(join(root, "bimri.md"));
    assertMatch(view, /checkout\.next-step/, "the synced proposal is not in bimri.md");
  }
  return steps;
}

/** The smoke steps' outputs with the store path replaced, for comparing two engines. */
export function normalizedOutputs(steps: SmokeStep[], root: string): string[] {
  return steps.map((s) =>
    `${s.args[0]} ${s.result.code}\n${s.result.stdout}\n${s.result.stderr}`.replaceAll(
      root,
      "<ROOT>",
    )
  );
}
