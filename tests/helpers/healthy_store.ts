/**
 * A small healthy store built through the CLI, for integrity tests: two
 * accepted subjects, a closed run, and an open stale-base conflict.
 * Built once per test file and copied per case (copying is much cheaper
 * than replaying the CLI).
 */
import { join } from "node:path";
import { must, newSubject, startRun, tempStore } from "./cli.ts";

/** IDs of the records the healthy store holds. */
export type HealthyStore = {
  root: string;
  /** Closed run with accepted proposals Q001 (a.one) and Q002 (a.two). */
  closedRun: string;
  /** Active run whose Q001 was accepted (a.one v2). */
  winnerRun: string;
  /** Active run whose Q001 is the contested candidate of C000001. */
  loserRun: string;
};

/** Builds the healthy store through the CLI. */
export async function buildHealthyStore(): Promise<HealthyStore> {
  const root = await tempStore("bimri-integrity-");
  const closedRun = await startRun(root, "codex");
  await must(root, ["journal", "--run", closedRun, "--text", "Setting up."]);
  for (const [key, text] of [["a.one", "First subject."], ["a.two", "Second subject."]]) {
    await must(root, newSubject(closedRun, key, text));
  }
  await must(root, ["sync", "--run", closedRun]);
  const winnerRun = await startRun(root, "claude");
  const loserRun = await startRun(root, "gemini");
  await must(root, ["propose", "--run", winnerRun, "--key", "a.one", "--text", "Winner."]);
  await must(root, ["propose", "--run", loserRun, "--key", "a.one", "--text", "Loser."]);
  await must(root, ["sync", "--run", winnerRun]);
  await must(root, ["sync", "--run", loserRun]);
  await must(root, ["close", "--run", closedRun, "--outcome", "success", "--summary", "Done."]);
  return { root, closedRun, winnerRun, loserRun };
}

/** Copies a folder tree (regular files and folders) into a fresh temp folder. */
export async function copyStore(from: string): Promise<string> {
  const to = await tempStore("bimri-integrity-copy-");
  const walk = (src: string, dst: string) => {
    for (const entry of Deno.readDirSync(src)) {
      const s = join(src, entry.name);
      const d = join(dst, entry.name);
      if (entry.isDirectory) {
        Deno.mkdirSync(d, { recursive: true });
        walk(s, d);
      } else if (entry.isFile) Deno.copyFileSync(s, d);
    }
  };
  walk(from, to);
  return to;
}

/** Path of a record under `.bimri/`. */
export function recordFile(root: string, folder: string, id: string): string {
  return join(root, ".bimri", folder, `${id}.json`);
}
