/**
 * The one-line progress indicator of long commands (doctor, index, maintain,
 * share pull, migrate, install): shown on stderr only when stderr is a
 * terminal, the output is not --json, and the work passes a second. The work
 * itself is synchronous, so the indicator ticks in a worker thread; it erases
 * its line before the command prints anything. Pipes and agents never see it.
 */

/** Milliseconds of work before the indicator appears. */
export const PROGRESS_DELAY_MS = 1000;

/**
 * The indicator's line at `elapsedMs` (tick `tick`), fitted to `columns`:
 * `| bimri doctor: auditing the store... 3s`. Empty before the delay.
 */
export function progressFrame(
  label: string,
  elapsedMs: number,
  tick: number,
  columns: number,
): string {
  if (elapsedMs < 1000) return "";
  const spinner = ["|", "/", "-", "\\"][tick % 4];
  const line = `${spinner} bimri ${label}... ${Math.floor(elapsedMs / 1000)}s`;
  const width = Math.max(10, columns - 1);
  return line.length > width ? line.slice(0, width - 1) + "~" : line;
}

// The worker's whole program: the same frame function, a timer, and an eraser.
function workerSource(): string {
  return `const progressFrame = ${progressFrame.toString()};
let timer = null;
let shown = false;
const encoder = new TextEncoder();
self.onmessage = (event) => {
  const message = event.data;
  if (message.type === "start") {
    let tick = 0;
    timer = setInterval(() => {
      const line = progressFrame(message.label, Date.now() - message.start, tick++, message.columns);
      if (line === "") return;
      shown = true;
      Deno.stderr.writeSync(encoder.encode("\\r\\x1b[2K" + line));
    }, 150);
  } else if (message.type === "stop") {
    if (timer !== null) clearInterval(timer);
    if (shown) Deno.stderr.writeSync(encoder.encode("\\r\\x1b[2K"));
    self.postMessage("stopped");
  }
};
`;
}

/** Starts the indicator for `label`; the returned function erases it (await it before printing). */
export function startProgress(label: string): () => Promise<void> {
  let columns = 80;
  try {
    columns = Deno.consoleSize().columns || 80;
  } catch {
    // Not a console after all: keep 80.
  }
  const worker = new Worker(
    `data:application/javascript,${encodeURIComponent(workerSource())}`,
    { type: "module" },
  );
  worker.postMessage({ type: "start", label, start: Date.now(), columns });
  return () =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timeout);
        worker.terminate();
        resolve();
      };
      const timeout = setTimeout(done, 1000);
      worker.onmessage = done;
      worker.postMessage({ type: "stop" });
    });
}
