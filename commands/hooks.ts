/**
 * `hook-start` and `hook-close`: the Claude Code SessionStart/SessionEnd
 * adapters. The payload arrives on stdin; the session identity maps one
 * Claude session to one run with actor `claude-code`.
 */
import { BimriError } from "../engine/errors.ts";
import {
  hookCloseSummary,
  hookSessionIdentity,
  parseHookPayload,
} from "../engine/install/hook_payload.ts";
import { closeRun } from "../engine/memory/close_run.ts";
import { sessionKey, validateSession } from "../engine/memory/runs.ts";
import { startRun } from "../engine/memory/start_run.ts";
import { authorityBriefLines, proveBeforeStart } from "../engine/integrity/authority.ts";
import {
  finishCommittedAnswersAtStart,
  requireStartRecovery,
  withStartRecovery,
} from "../engine/memory/start_recovery.ts";
import { loadTextScreen } from "../engine/memory/run_input.ts";
import { StorePaths } from "../engine/store/paths.ts";
import { loadState, storeExists, withStore } from "../engine/store/store.ts";
import { type Command, ok } from "./command.ts";
import { memoryCounts, renderBrief, summaryJson } from "./render.ts";

/** The actor every Claude Code hook run uses. */
export const HOOK_ACTOR = "claude-code";

/** The hook-start verb. */
export const hookStartCommand: Command = {
  name: "hook-start",
  summary: "Claude Code SessionStart hook: open or resume the session's run (payload on stdin)",
  help: `usage: bimri hook-start < payload.json

Reads Claude Code's SessionStart payload from stdin and opens a run for its
session_id (else transcript_path) with actor claude-code, or resumes the run
already mapped to that session, then prints the brief. A payload without
either identity is refused with exit 2 and [hook-identity-missing]; nothing is
created.`,
  flags: {},
  async run(ctx) {
    const { payload, diagnosis } = parseHookPayload(ctx.readStdin());
    const session = hookSessionIdentity(payload);
    if (session === null) {
      // A run without a stable identity could never be closed by the matching
      // SessionEnd hook, so refuse before touching the folder at all.
      throw new BimriError(
        "invalid-input",
        `hook-start opened no run: ${
          diagnosis ?? "the payload carries no session_id or transcript_path"
        }. [hook-identity-missing]`,
      );
    }
    const screen = await loadTextScreen(ctx.root, [session]);
    return withStartRecovery((finishers) =>
      withStore(ctx.root, (store) => {
        proveBeforeStart(store);
        finishers = requireStartRecovery(store, finishers);
        const result = startRun(store, HOOK_ACTOR, session, screen);
        const recovery = authorityBriefLines(store);
        if (recovery.issues.length === 0) finishCommittedAnswersAtStart(store, finishers);
        const brief = renderBrief(result, recovery.lines);
        return ok(brief, {
          run: result.run,
          resumed: result.resumed,
          actor: result.actor,
          date: result.date,
          revision: result.head.revision,
          authority_recovery_needed: recovery.issues,
          brief,
        }, [...result.notices, ...result.warnings]);
      })
    );
  },
};

/** The hook-close verb. */
export const hookCloseCommand: Command = {
  name: "hook-close",
  summary: "Claude Code SessionEnd hook: close the session's own run (payload on stdin)",
  help: `usage: bimri hook-close < payload.json

Reads Claude Code's SessionEnd payload from stdin and closes only the run
mapped to its session_id (else transcript_path), outcome partial, with the end
reason flattened to one bounded line. An unknown session is a silent no-op
(exit 0); a session the engine cannot key (over 500 characters or with control
characters) is refused with exit 2. In a folder without a store, an empty
store is created first, as the reference engine does. The explicit close
command stays strict.`,
  flags: {},
  run(ctx) {
    const { payload } = parseHookPayload(ctx.readStdin());
    const session = hookSessionIdentity(payload);
    // A session the reference cannot key (too long, control characters) is
    // refused as it refuses it, not passed over as unknown.
    if (session !== null) validateSession(session);
    const noop = ok("", { closed: false, run: null });
    const paths = new StorePaths(ctx.root);
    // Like the reference, a SessionEnd in a folder without a store leaves an
    // initialized, empty store behind (there is no run to close in it).
    if (!storeExists(paths)) return withStore(ctx.root, () => noop);
    if (session === null) return noop;
    const key = sessionKey(HOOK_ACTOR, session);
    // Decide the common no-op from a plain read (state is replaced atomically), so
    // an unknown session never creates folders, heals the view or touches anything.
    const known = loadState(paths);
    if (!known.session_runs[key] || !known.active_runs[known.session_runs[key]]) return noop;
    return withStore(ctx.root, (store) => {
      const mapped = store.state.session_runs[key];
      if (!mapped || !store.state.active_runs[mapped]) return noop;
      const reason = "reason" in payload ? payload.reason : "ended";
      const result = closeRun(store, mapped, "partial", hookCloseSummary(reason));
      const counts = memoryCounts(result.memory);
      const text = [
        ...result.memory.notices,
        `BIMRI: run ${mapped} closed.${counts ? ` Memory: ${counts}.` : ""}`,
      ].join("\n") + "\n";
      return ok(
        text,
        {
          closed: true,
          run: mapped,
          outcome: result.outcome,
          memory: summaryJson(result.memory),
        },
        [...result.notices, ...result.warnings],
      );
    });
  },
};
