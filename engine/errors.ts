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
  /**
   * stderr notices of work the command finished before it was refused (a
   * direct edit of bimri.md preserved, say), printed before the error.
   */
  notices: string[] = [];

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
 * reports it; the MCP server reports it the same way. The OS conditions a
 * user can fix (a full disk, a read-only file system, missing permissions)
 * say what to do instead of calling themselves unexpected.
 */
export function unexpectedFailure(error: unknown): BimriError {
  const message = error instanceof Error ? error.message : String(error);
  const condition = osCondition(error);
  // A commit an OS error cut short is finished or undone by the next command,
  // as after a crash at the same point.
  if (condition === "disk-full") {
    return new BimriError(
      "io",
      `the disk is full: ${message}. Free some space, then retry the command; run doctor to check the store.`,
    );
  }
  if (condition === "read-only") {
    return new BimriError(
      "io",
      `the store is on a read-only file system: ${message}. Commands that take the engine lock (start, journal, propose, sync, close, status, doctor, index, maintain) need it writable; get, recall, search, review and doctor --read-only only read.`,
    );
  }
  if (condition === "permission") {
    return new BimriError(
      "io",
      `permission denied: ${message}. Run bimri as a user who may write the project folder and its .bimri/ folder, or fix their permissions, then retry the command.`,
    );
  }
  return new BimriError("io", `unexpected failure: ${message}. Run doctor to check the store.`);
}

/** The OS error a user can fix, if `error` is one (`os` is injected by unit tests). */
export function osCondition(
  error: unknown,
  os: string = Deno.build.os,
): "disk-full" | "read-only" | "permission" | null {
  if (!(error instanceof Error)) return null;
  const code = (error as { code?: unknown }).code;
  if (code === "ENOSPC" || code === "EDQUOT") return "disk-full";
  // Windows: ERROR_HANDLE_DISK_FULL (39) and ERROR_DISK_FULL (112).
  if (os === "windows" && /\(os error (?:39|112)\)/.test(error.message)) {
    return "disk-full";
  }
  if (code === "EROFS") return "read-only";
  // An OS refusal (EACCES, EPERM); Deno's own permission checks throw NotCapable.
  if (error instanceof Deno.errors.PermissionDenied) return "permission";
  return null;
}
