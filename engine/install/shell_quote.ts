/**
 * Quotes a command line that bimri prints for a person to paste into the
 * shell of the platform it runs on: POSIX shells get single quotes; Windows
 * gets double quotes that cmd.exe and PowerShell both pass on as one
 * argument. (PowerShell runs a quoted program path only after `& `, its call
 * operator, which cmd.exe does not know: a bare program path needs neither.)
 */

/** Characters no POSIX shell treats specially in a bare word. */
const POSIX_SAFE = /^[A-Za-z0-9_./:=@%+,-]+$/;

/**
 * Characters neither cmd.exe nor PowerShell treats specially in a bare word:
 * no `%` (cmd variables), no `,` (a PowerShell array), no `@` (splatting), no
 * `$` or backtick (PowerShell), no `^ & | < > ( ) ; !`.
 */
const WINDOWS_SAFE = /^[A-Za-z0-9_.\\/:=+-]+$/;

/** `arg` as one POSIX shell word. */
export function posixQuote(arg: string): string {
  return POSIX_SAFE.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

/**
 * `arg` as one Windows argument, by the rules programs use to split their
 * command line (CommandLineToArgvW): inside double quotes, a quote is `\"` and
 * backslashes are doubled only before a quote or the closing quote. A `%` or
 * `$` inside quotes may still be expanded by cmd.exe or PowerShell (neither
 * has an escape both accept); Windows paths rarely hold either.
 */
export function windowsQuote(arg: string): string {
  if (WINDOWS_SAFE.test(arg)) return arg;
  let out = '"';
  let backslashes = 0;
  for (const char of arg) {
    if (char === "\\") {
      backslashes++;
      continue;
    }
    if (char === '"') out += "\\".repeat(backslashes * 2 + 1) + '"';
    else out += "\\".repeat(backslashes) + char;
    backslashes = 0;
  }
  return `${out}${"\\".repeat(backslashes * 2)}"`;
}

/** `argv` as one printable command line for the shell of the OS family `os` (`Deno.build.os`). */
export function commandLineFor(argv: readonly string[], os: string): string {
  const quote = os === "windows" ? windowsQuote : posixQuote;
  return argv.map(quote).join(" ");
}
