/**
 * A stand-in for a stuck BIMRI process: a separate process that holds the OS
 * lock on a store's `.bimri/engine.lock` until the test lets it go. Run as a
 * script it locks the file named by its argument, prints `locked` and holds
 * the lock until its stdin closes; a test process that dies closes that
 * stdin too, so a holder never outlives its test.
 */
import { fileURLToPath } from "node:url";

/** A running holder process. */
export type LockHolder = {
  /** Closes the holder's stdin and waits until it has exited (the lock is free then). */
  release(): Promise<void>;
};

/**
 * Starts a holder of the engine lock of the store at `root` (exclusive unless
 * `shared`) and resolves once the holder reports it owns the lock, so the test
 * needs no sleep to know the lock is taken.
 */
export async function holdEngineLock(root: string, shared = false): Promise<LockHolder> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-read",
      "--allow-write",
      fileURLToPath(import.meta.url),
      `${root}/.bimri/engine.lock`,
      ...(shared ? ["--shared"] : []),
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const stdin = child.stdin.getWriter();
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let said = "";
  while (!said.includes("locked\n")) {
    const { done, value } = await reader.read();
    if (done) {
      await stdin.close().catch(() => {});
      throw new Error(
        `the lock holder exited before taking the lock (${(await child.status).code})`,
      );
    }
    said += decoder.decode(value, { stream: true });
  }
  return {
    async release() {
      await stdin.close();
      await reader.cancel();
      const status = await child.status;
      if (!status.success) throw new Error(`the lock holder failed (${status.code})`);
    },
  };
}

if (import.meta.main) {
  const [path, mode] = Deno.args;
  const file = Deno.openSync(path, { read: true, write: true });
  // A blocking lock on purpose: the holder stands for a process that got the
  // lock normally; it only reports once it really owns it.
  file.lockSync(mode !== "--shared");
  await Deno.stdout.write(new TextEncoder().encode("locked\n"));
  for await (const _chunk of Deno.stdin.readable) {
    // Nothing is sent; the loop ends when the test closes stdin.
  }
  file.unlockSync();
  file.close();
}
