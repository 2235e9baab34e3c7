/** The installer's self-checks through the recorded runtime prefix: hook smoke test in a store copy, no-op hook check, doctor. */
import { join } from "node:path";
import { auditStore } from "../integrity/doctor.ts";
import { lstatOrNull } from "../store/files.ts";
import { StorePaths } from "../store/paths.ts";
import { loadState } from "../store/store.ts";
import { renderedHookCommand } from "./hooks_config.ts";
import type { RuntimePrefix } from "./runtime.ts";
import { INSTALL_BACKUPS, rel } from "./project_files.ts";
import type { HookSmoke } from "./report.ts";

type ChildResult = { code: number; stdout: string; stderr: string };

async function runArgv(
  command: string,
  args: string[],
  cwd: string,
  stdin: string | null,
  timeoutSeconds: number,
): Promise<ChildResult> {
  const child = new Deno.Command(command, {
    args,
    cwd,
    stdin: stdin === null ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(timeoutSeconds * 1000),
  }).spawn();
  if (stdin !== null) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const out = await child.output();
  const decoder = new TextDecoder();
  return {
    code: out.signal === null ? out.code : 124,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
  };
}

function describeFailure(what: string, result: ChildResult): string {
  const detail = (result.stderr.trim() || result.stdout.trim() || "no output").slice(0, 400);
  return `${what} (exit ${result.code}): ${detail}`;
}

/**
 * Copies the store (`bimri.md` and `.bimri/` without install backups) into
 * `into`, regular files and folders only: the fresh store has nothing else.
 * The engine lock is never read or copied (on Windows another process may
 * hold it, and a held lock cannot be read): the copy's first command creates its own.
 */
function copyStore(target: string, into: string): void {
  const copy = (from: string, to: string) => {
    const info = lstatOrNull(from);
    if (info === null) return;
    if (info.isDirectory && !info.isSymlink) {
      Deno.mkdirSync(to);
      for (const entry of Deno.readDirSync(from)) {
        const entryRel = rel(target, join(from, entry.name));
        if (entryRel === INSTALL_BACKUPS || entryRel === ".bimri/engine.lock") continue;
        copy(join(from, entry.name), join(to, entry.name));
      }
    } else if (info.isFile) Deno.copyFileSync(from, to);
    else throw new Error(`cannot copy ${rel(target, from)} for the hook smoke test`);
  };
  copy(join(target, "bimri.md"), join(into, "bimri.md"));
  copy(join(target, ".bimri"), join(into, ".bimri"));
}

/**
 * Runs the rendered SessionStart and SessionEnd commands with one synthetic
 * session and requires a new run, its brief, and its close. They run against
 * a throwaway copy of the new store (the rendered `${CLAUDE_PROJECT_DIR}`
 * bound to the copy): the reference's install opens no run, so the project's
 * first agent must get R000001 and `status` must show no runs.
 */
export async function hookSmokeTest(target: string, hooks: string): Promise<HookSmoke> {
  const nonce = Array.from(
    crypto.getRandomValues(new Uint8Array(8)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  const session = `bimri-install-smoke-${nonce}`;
  const scratch = Deno.makeTempDirSync({ prefix: "bimri-install-smoke-" });
  try {
    copyStore(target, scratch);
    const start = renderedHookCommand(hooks, "SessionStart", scratch);
    const opened = await runArgv(
      start.command,
      start.args,
      target,
      JSON.stringify({ session_id: session, hook_event_name: "SessionStart", source: "startup" }),
      start.timeout,
    );
    const handle = /^BIMRI RUN HANDLE: (R[0-9]{6})$/m.exec(opened.stdout);
    if (opened.code !== 0 || !handle || !/^=== BIMRI BRIEF R[0-9]{6} \|/m.test(opened.stdout)) {
      throw new Error(
        describeFailure("the rendered hook-start did not open a run with a brief", opened),
      );
    }
    const end = renderedHookCommand(hooks, "SessionEnd", scratch);
    const closed = await runArgv(
      end.command,
      end.args,
      target,
      JSON.stringify({
        session_id: session,
        hook_event_name: "SessionEnd",
        reason: "bimri install smoke test",
      }),
      end.timeout,
    );
    if (closed.code !== 0 || !closed.stdout.includes(`BIMRI: run ${handle[1]} closed.`)) {
      throw new Error(
        describeFailure(`the rendered hook-close did not close ${handle[1]}`, closed),
      );
    }
    const state = loadState(new StorePaths(scratch));
    if (state.active_runs[handle[1]]) {
      throw new Error(`the smoke-test run ${handle[1]} is still active after hook-close`);
    }
    // The hooks run in the project folder, as Claude Code runs them: the run must
    // land where the rendered --root points, never in the store found from there.
    const log = join(".bimri", "log", `${handle[1]}.md`);
    if (!lstatOrNull(join(scratch, log))?.isFile || lstatOrNull(join(target, log)) !== null) {
      throw new Error(`the rendered hooks did not run ${handle[1]} in the store --root named`);
    }
    const detail = "for a synthetic session in a throwaway copy of the new store and hook-close " +
      "closed it; the project's store gets no run";
    return { status: "passed", run: handle[1], detail: `hook-start opened ${handle[1]} ${detail}` };
  } finally {
    try {
      Deno.removeSync(scratch, { recursive: true });
    } catch { /* a leftover temp folder is harmless; the OS temp cleaner takes it */ }
  }
}

/** Runs the rendered SessionEnd command for an unknown session: must succeed silently. */
export async function hookNoopCheck(target: string, hooks: string): Promise<HookSmoke> {
  const end = renderedHookCommand(hooks, "SessionEnd", target);
  const result = await runArgv(
    end.command,
    end.args,
    target,
    JSON.stringify({ session_id: "bimri-install-check-unknown-session", reason: "check" }),
    end.timeout,
  );
  if (result.code !== 0 || result.stdout !== "" || result.stderr !== "") {
    throw new Error(describeFailure("the rendered hook-close failed its no-op check", result));
  }
  return {
    status: "no-op-verified",
    run: null,
    detail:
      "the rendered hook command ran bimri as a no-op close; an existing store gets no synthetic run (smoke-test it yourself, see the Claude Code hooks section of BIMRI's install guide)",
  };
}

/** Runs `doctor` through the recorded prefix (the binding agents will use). */
export async function doctorThroughPrefix(
  target: string,
  prefix: RuntimePrefix,
): Promise<{ passed: boolean; errors: string[]; warnings: string[] }> {
  const [command, ...args] = prefix.argv;
  const result = await runArgv(command, [...args, "--root", target, "doctor"], target, null, 120);
  const lines = result.stdout.split("\n").filter((l) => l.startsWith("  - ")).map((l) =>
    l.slice(4)
  );
  const passed = result.code === 0 && /^BIMRI doctor: PASSED$/m.test(result.stdout);
  if (!passed) throw new Error(describeFailure("doctor did not pass", result));
  return { passed, errors: [], warnings: lines };
}

/**
 * The self-check of an upgraded v5.0.x store: doctor through the prefix must
 * pass, or fail only on damage the read-only audit names (governance records
 * the owner repairs with quarantine-authority); anything else rolls back.
 */
export async function selfCheckOrRecovery(
  target: string,
  prefix: RuntimePrefix,
): Promise<{ passed: boolean; errors: string[]; warnings: string[] }> {
  try {
    return await doctorThroughPrefix(target, prefix);
  } catch (error) {
    const report = auditStore(new StorePaths(target));
    if (report.passed) throw error;
    return { passed: false, errors: report.errors, warnings: report.warnings };
  }
}

/** Fails the self-check on purpose when BIMRI_FORCE_SELF_CHECK_FAILURE=1 (the CLI tests' way to prove the rollback). */
export function forcedSelfCheckFailure(): void {
  // Test hook: lets the CLI tests prove the rollback path end to end.
  if (Deno.env.get("BIMRI_FORCE_SELF_CHECK_FAILURE") === "1") {
    throw new Error("forced self-check failure (BIMRI_FORCE_SELF_CHECK_FAILURE=1)");
  }
}
