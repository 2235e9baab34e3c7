/**
 * The one error type of the engine. Every refusal carries a stable code for
 * `--json` consumers and a message that tells the user what to do next.
 */

/** Stable machine-readable error codes (part of the `--json` contract). */
export type ErrorCode =
  | "usage"
  | "invalid-input"
  | "unknown-run"
  | "unknown-record"
  | "refused"
  | "stale-base"
  | "store-unsafe"
  | "store-corrupt"
  | "authority-recovery-needed"
  | "busy"
  | "io";

/** An error the CLI reports as `BIMRI ERROR: <message>` with exit code 2. */
export class BimriError extends Error {
  /** Stable code for agents. */
  readonly code: ErrorCode;
  /** Process exit code (always 2 for refusals and failures). */
  readonly exitCode: number;

  /** A refusal or failure with its stable `code`, the message shown, and the exit code. */
  constructor(code: ErrorCode, message: string, exitCode = 2) {
    super(message);
    this.name = "BimriError";
    this.code = code;
    this.exitCode = exitCode;
  }
}

/** Shorthand for an invalid-input refusal. */
export function invalid(message: string): BimriError {
  return new BimriError("invalid-input", message);
}

/** Shorthand for a usage (flag/argument) refusal. */
export function usage(message: string): BimriError {
  return new BimriError("usage", message);
}

/**
 * A failure that is not a refusal (an OS error, a bug), worded as the CLI
 * reports it; the MCP server reports it the same way.
 */
export function unexpectedFailure(error: unknown): BimriError {
  const message = error instanceof Error ? error.message : String(error);
  if (isDiskFull(error)) {
    // Not a bug: say what to do. A commit the disk cut short is finished or
    // undone by the next command, as after a crash at the same point.
    return new BimriError(
      "io",
      `the disk is full: ${message}. Free some space, then retry the command; run doctor to check the store.`,
    );
  }
  return new BimriError("io", `unexpected failure: ${message}. Run doctor to check the store.`);
}

/** True for the OS errors of a full disk or an exhausted quota. */
function isDiskFull(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (code === "ENOSPC" || code === "EDQUOT") return true;
  // Windows: ERROR_HANDLE_DISK_FULL (39) and ERROR_DISK_FULL (112).
  return Deno.build.os === "windows" && /\(os error (?:39|112)\)/.test(error.message);
}
