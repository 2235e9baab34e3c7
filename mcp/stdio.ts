/**
 * MCP stdio transport: newline-delimited JSON-RPC 2.0 on stdin/stdout.
 *
 * The SDK ships a stdio transport, but it drops unparseable lines silently and
 * never notices end of input. This one answers a line that is not JSON with a
 * JSON-RPC parse error (-32700), a JSON value that is not a JSON-RPC message
 * with an invalid-request error (-32600), and reports end of input as the
 * client disconnecting, so the server can close its run and exit.
 */
import { ErrorCode, type JSONRPCMessage, JSONRPCMessageSchema, type Transport } from "./sdk.ts";

/** Longest accepted message line (bytes); longer lines are refused, not buffered forever. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** How long end of input waits for answers to requests still being handled. */
export const DRAIN_LIMIT_MS = 30_000;

/** What the transport reads from and writes to (stdin/stdout by default; streams in tests). */
export type StdioStreams = {
  input: ReadableStream<Uint8Array>;
  output: { write(bytes: Uint8Array): Promise<number> };
};

type RequestId = string | number | null;

function idOf(value: unknown): RequestId {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const id = (value as Record<string, unknown>).id;
    if (typeof id === "string" || (typeof id === "number" && Number.isFinite(id))) return id;
  }
  return null;
}

/** A Transport for the SDK's Server over newline-delimited stdio. */
export class LineTransport implements Transport {
  /** Called once when input ends or the transport is closed. */
  onclose?: () => void;
  /** Called for transport-level problems (they are also answered on the wire when possible). */
  onerror?: (error: Error) => void;
  /** Called for every well-formed JSON-RPC message. */
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  #streams: StdioStreams;
  #reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  #closed = false;
  #writes: Promise<void> = Promise.resolve();
  #encoder = new TextEncoder();
  /** Requests received and not yet answered: end of input waits for their responses. */
  #unanswered = new Set<string | number>();
  #allAnswered: (() => void) | null = null;

  /** A transport over `streams`, by default the process's stdin and stdout. */
  constructor(streams?: StdioStreams) {
    this.#streams = streams ?? { input: Deno.stdin.readable, output: Deno.stdout };
  }

  /** Starts reading input in the background. */
  start(): Promise<void> {
    this.#reader = this.#streams.input.getReader();
    this.#readLoop().catch((error) => this.onerror?.(error as Error)).finally(() => this.close());
    return Promise.resolve();
  }

  async #readLoop(): Promise<void> {
    const reader = this.#reader!;
    const decoder = new TextDecoder();
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    let skipping = false;
    while (!this.#closed) {
      const { value, done } = await reader.read();
      if (done) break;
      let start = 0;
      for (let i = 0; i < value.length; i++) {
        if (value[i] !== 0x0a) continue;
        const piece = value.subarray(start, i);
        start = i + 1;
        if (skipping) {
          skipping = false;
          continue;
        }
        pending.push(piece);
        const line = decoder.decode(concat(pending, pendingBytes + piece.length));
        pending = [];
        pendingBytes = 0;
        await this.#handleLine(line.endsWith("\r") ? line.slice(0, -1) : line);
      }
      if (start < value.length && !skipping) {
        const rest = value.slice(start);
        pending.push(rest);
        pendingBytes += rest.length;
        if (pendingBytes > MAX_LINE_BYTES) {
          pending = [];
          pendingBytes = 0;
          skipping = true;
          await this.#sendError(null, ErrorCode.InvalidRequest, "message exceeds 16 MiB");
        }
      }
    }
    if (pendingBytes > 0 && !skipping) {
      const line = decoder.decode(concat(pending, pendingBytes));
      await this.#handleLine(line.endsWith("\r") ? line.slice(0, -1) : line);
    }
    // A client may write its last requests and close its end at once: answer them first
    // (bounded, in case the server never answers one).
    if (this.#unanswered.size > 0 && !this.#closed) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#allAnswered = resolve;
        timer = setTimeout(resolve, DRAIN_LIMIT_MS);
      });
      clearTimeout(timer);
    }
  }

  async #handleLine(line: string): Promise<void> {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      await this.#sendError(null, ErrorCode.ParseError, `Parse error: ${(error as Error).message}`);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      await this.#sendError(
        idOf(value),
        ErrorCode.InvalidRequest,
        "Invalid Request: not a JSON-RPC 2.0 request, notification or response",
      );
      return;
    }
    const message = parsed.data as Record<string, unknown>;
    const id = message.id;
    if (typeof message.method === "string" && (typeof id === "string" || typeof id === "number")) {
      this.#unanswered.add(id);
    }
    // The server never answers a request the client cancelled: end of input must not wait for it.
    if (message.method === "notifications/cancelled") {
      const params = message.params as Record<string, unknown> | undefined;
      const cancelled = params?.requestId;
      if (typeof cancelled === "string" || typeof cancelled === "number") {
        this.#settled(cancelled, Promise.resolve());
      }
    }
    this.onmessage?.(parsed.data);
  }

  #sendError(id: RequestId, code: number, message: string): Promise<void> {
    // JSON-RPC 2.0 allows a null id only in error responses to unidentifiable requests;
    // the SDK's message type does not model that, so this goes out as raw JSON.
    return this.#write(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }) + "\n");
  }

  /** Sends one message as one line. */
  send(message: JSONRPCMessage): Promise<void> {
    const sent = this.#write(JSON.stringify(message) + "\n");
    const record = message as Record<string, unknown>;
    const id = record.id;
    if (record.method === undefined && (typeof id === "string" || typeof id === "number")) {
      this.#settled(id, sent);
    }
    return sent;
  }

  /** Request `id` needs no answer any more (answered once `done` settles, or cancelled). */
  #settled(id: string | number, done: Promise<void>): void {
    this.#unanswered.delete(id);
    if (this.#unanswered.size === 0 && this.#allAnswered) {
      const resolve = this.#allAnswered;
      this.#allAnswered = null;
      done.then(resolve);
    }
  }

  #write(text: string): Promise<void> {
    const bytes = this.#encoder.encode(text);
    const output = this.#streams.output;
    this.#writes = this.#writes.then(async () => {
      let offset = 0;
      while (offset < bytes.length) offset += await output.write(bytes.subarray(offset));
    }).catch((error) => this.onerror?.(error as Error));
    return this.#writes;
  }

  /** Stops reading and reports the close once; pending writes are flushed first. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#allAnswered?.();
    // Not awaited: a console read that cannot be interrupted must not hold up the shutdown.
    this.#reader?.cancel().catch(() => {});
    await this.#writes;
    this.onclose?.();
  }
}

function concat(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const all = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    all.set(part, offset);
    offset += part.length;
  }
  return all;
}
