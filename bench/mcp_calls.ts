/**
 * Times the everyday operations as tool calls on one resident `bimri mcp`
 * server: the same engine, lock and durable steps as the CLI, without a
 * process start and module load per operation. Wall time is measured at the
 * client, from writing the request to reading its answer.
 */

/** Wall times (ms) of each tool call, by row name, and what the server wrote to stderr. */
export type McpTimings = { calls: Record<string, number[]>; stderr: string };

type Answer = { id?: number; result?: { isError?: boolean }; error?: { message: string } };

/** A newline-delimited JSON-RPC client over a child process's stdio. */
class LineClient {
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #lines: AsyncIterator<string>;
  #nextId = 1;

  constructor(private readonly child: Deno.ChildProcess) {
    this.#writer = child.stdin.getWriter();
    this.#lines = child.stdout
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(splitLines())[Symbol.asyncIterator]();
  }

  notify(method: string, params: Record<string, unknown> = {}): Promise<void> {
    return this.#send({ jsonrpc: "2.0", method, params });
  }

  /** Sends one request and waits for its answer; throws on a protocol or tool error. */
  async request(method: string, params: Record<string, unknown>): Promise<Answer> {
    const id = this.#nextId++;
    await this.#send({ jsonrpc: "2.0", id, method, params });
    while (true) {
      const next = await this.#lines.next();
      if (next.done) throw new Error(`bimri mcp exited before answering ${method}`);
      const answer = JSON.parse(next.value) as Answer;
      if (answer.id !== id) continue; // a notification or log line
      if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
      if (answer.result?.isError) throw new Error(`${method}: ${JSON.stringify(answer.result)}`);
      return answer;
    }
  }

  async close(): Promise<void> {
    await this.#writer.close();
    await this.child.status;
  }

  #send(message: Record<string, unknown>): Promise<void> {
    return this.#writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  }
}

function splitLines(): TransformStream<string, string> {
  let pending = "";
  return new TransformStream({
    transform(chunk, controller) {
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop()!;
      for (const line of lines) if (line.trim()) controller.enqueue(line);
    },
    flush(controller) {
      if (pending.trim()) controller.enqueue(pending);
    },
  });
}

/**
 * Starts `bimri --root <root> mcp` with `argv` (deno run ... main.ts, possibly
 * behind a wrapper such as /usr/bin/time, whose report ends up in stderr) and
 * runs `samples` sessions of start, journal, propose, sync, propose close and
 * close, each followed by hot and cold key lookups and a query.
 */
export async function measureMcp(
  argv: string[],
  root: string,
  samples: number,
  keys: { hot: string; cold: string[]; query: string },
): Promise<McpTimings> {
  const child = new Deno.Command(argv[0], {
    args: [...argv.slice(1), "--root", root, "mcp"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const client = new LineClient(child);
  const calls: Record<string, number[]> = {};
  const timed = async (row: string, tool: string, args: Record<string, unknown>) => {
    const started = performance.now();
    await client.request("tools/call", { name: tool, arguments: args });
    (calls[row] ??= []).push(performance.now() - started);
  };
  try {
    await client.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "bimri-bench", version: "1" },
    });
    await client.notify("notifications/initialized");
    for (let i = 0; i < samples; i++) {
      const key = `measure.mcp-${Date.now().toString(36)}-${i}`;
      await timed("memory_start", "memory_start", { actor: "bench" });
      await timed("memory_journal", "memory_journal", { text: "Measured journal entry." });
      await timed("memory_propose", "memory_propose", {
        tier: 2,
        new_subject: true,
        key,
        text: "Measured subject.",
      });
      await timed("memory_sync", "memory_sync", {});
      await client.request("tools/call", {
        name: "memory_propose",
        arguments: { operation: "close", key },
      });
      await timed("memory_close", "memory_close", { outcome: "success", summary: "Measured." });
      await timed("memory_recall key (hot)", "memory_recall", { key: keys.hot });
      if (keys.cold.length) {
        await timed("memory_recall key (cold)", "memory_recall", {
          key: keys.cold[i % keys.cold.length],
        });
      }
      await timed("memory_recall query", "memory_recall", { query: keys.query });
    }
  } finally {
    await client.close();
  }
  return { calls, stderr: await stderr };
}
