/** Install's advisory stderr notices, so tests that expect no warnings can set them aside. */

/** `stderr` without install's "no `bimri` command on PATH" hint (three lines). */
export function withoutPathHint(stderr: string): string {
  return stderr.replace(/^BIMRI: there is no `bimri` command on PATH[^\n]*\n[^\n]*\n[^\n]*\n/m, "");
}
