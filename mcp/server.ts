/**
 * `bimri mcp`: the memory as a Model Context Protocol server on stdio.
 *
 * Every tool call runs the same CLI verb in this process (same flag parsing,
 * same engine, same engine lock, same refusals), so an MCP client and shell
 * agents share one memory under one set of rules. The MCP session owns at
 * most one run: memory_start opens it, the other tools default to it, and it
 * is closed with outcome partial if the client goes away without closing it.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { BimriError, unexpectedFailure } from "../engine/errors.ts";
import { sessionKey } from "../engine/memory/runs.ts";
import { ACTOR, requireActor } from "../engine/model/ids.ts";
import { decodeUtf8Strict } from "../engine/model/text.ts";
import { readBytesOrNull, refuseSymlink } from "../engine/store/files.ts";
import { StorePaths } from "../engine/store/paths.ts";
import { loadState, storeExists } from "../engine/store/store.ts";
import {
  type Command,
  type CommandContext,
  type CommandResult,
  parseCommandArgs,
} from "../commands/command.ts";
import { runCommand } from "../commands/run.ts";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  InitializeRequestSchema,
  type JSONRPCMessage,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  Server,
  type Tool,
} from "./sdk.ts";
import { LineTransport, type StdioStreams } from "./stdio.ts";
import { checkArguments, inputSchema, toArgv, TOOL_SPECS, type ToolSpec } from "./tools.ts";
import { visibleDeep, visibleOutput } from "../engine/model/visible.ts";

/** The signals that stop the server on the OS family `os`: Windows has no SIGTERM or SIGHUP listener. */
export function stopSignals(os: string): Deno.Signal[] {
  return os === "windows" ? ["SIGINT", "SIGBREAK"] : ["SIGINT", "SIGTERM", "SIGHUP"];
}

/** Summary written to the log when the client leaves without memory_close. */
export const DISCONNECT_SUMMARY = "MCP client disconnected without closing the run.";

/** Options of one server instance. */
export type ServeOptions = {
  /** The store root (absolute). */
  root: string;
  /** Server name/version reported in initialize. */
  version: string;
  /** Looks up a CLI verb by name (the registry in commands/mod.ts). */
  findCommand: (name: string) => Command | undefined;
  /** Streams to serve on (stdin/stdout by default). */
  streams?: StdioStreams;
  /** Diagnostics sink (stderr by default; stdout belongs to the protocol). */
  log?: (line: string) => void;
};

/** A tool whose verb exists with every flag the tool maps to. */
export type ServedTool = { spec: ToolSpec; command: Command };

/** The run this MCP session opened. */
type SessionRun = { run: string; actor: string; session: string };

/**
 * Pairs each tool with its verb. A tool whose verb is not registered, or lacks
 * a flag the tool maps to, is left out of tools/list rather than served broken.
 */
export function servedTools(
  findCommand: (name: string) => Command | undefined,
): { tools: ServedTool[]; missing: string[] } {
  const tools: ServedTool[] = [];
  const missing: string[] = [];
  for (const spec of TOOL_SPECS) {
    const command = findCommand(spec.command);
    if (!command) {
      missing.push(`${spec.name} (no \`${spec.command}\` verb)`);
      continue;
    }
    const gaps: string[] = [];
    for (const arg of Object.values(spec.args)) {
      if (arg.flag === null) {
        if ((command.positionals ?? 0) < 1) gaps.push("a positional argument");
        continue;
      }
      const flag = command.flags[arg.flag];
      const wanted = arg.kind === "boolean" ? "boolean" : "string";
      if (!flag || flag.type !== wanted) gaps.push(`--${arg.flag} (${wanted})`);
    }
    if (gaps.length > 0) {
      missing.push(`${spec.name} (\`${spec.command}\` lacks ${gaps.join(", ")})`);
      continue;
    }
    tools.push({ spec, command });
  }
  return { tools, missing };
}

/** The tools/list entry of a served tool. */
export function toolListing(spec: ToolSpec): Tool {
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: inputSchema(spec) as Tool["inputSchema"],
    outputSchema: spec.output as Tool["outputSchema"],
    annotations: {
      title: spec.title,
      readOnlyHint: spec.readOnly,
      destructiveHint: false,
      idempotentHint: spec.readOnly,
      openWorldHint: false,
    },
  };
}

/** A slug usable as an actor, derived from the client's name ("Claude Desktop" -> "claude-desktop"). */
export function actorFromClientName(name: string | undefined): string {
  const slug = (name ?? "").toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[-._]+/, "")
    .replace(/-+$/, "").slice(0, 64);
  return ACTOR.test(slug) ? slug : "mcp";
}

function errorResult(error: BimriError): CallToolResult {
  return {
    isError: true,
    content: [{ type: "text", text: visibleOutput(`BIMRI ERROR: ${error.message}`) }],
  };
}

function asBimriError(error: unknown): BimriError {
  // Failures that are not refusals are worded as the CLI dispatcher words them.
  return error instanceof BimriError ? error : unexpectedFailure(error);
}

/** Turns a verb's result into a tool result: its text, and its `--json` document as structured content. */
export function toolResult(spec: ToolSpec, result: CommandResult): CallToolResult {
  // Untrusted text reaches the agent with hidden characters made visible (visible.ts).
  const text = visibleOutput(
    [result.text, ...(result.stderr ?? []).map((l) => l.endsWith("\n") ? l : l + "\n")].join(""),
  );
  const success = result.exitCode === 0 || (result.exitCode === 1 && spec.exitOneIsResult === true);
  if (!success) return { isError: true, content: [{ type: "text", text }] };
  // Exactly the document `--json` prints (retrieval keeps the reference's shape, without `ok`).
  const data = result.jsonText !== undefined
    ? JSON.parse(result.jsonText) as Record<string, unknown>
    : "ok" in result.data
    ? result.data
    : { ok: result.exitCode === 0, ...result.data };
  return {
    content: [{ type: "text", text }],
    structuredContent: visibleDeep(data) as Record<string, unknown>,
  };
}

const INSTRUCTIONS =
  `BIMRI is this project's shared, durable memory (shell agents use the same store).
1. Call memory_start once; read the bimri.md resource (the working set).
2. memory_journal durable detail as you work; memory_recall a key or a query when you need history.
3. memory_propose anything future runs must know, under a stable lowercase key (new subjects need new_subject); memory_sync applies proposals now.
4. memory_close with an outcome and a one-line summary when done.
Conflicts between agents are the owner's to decide: show memory_review to the owner and call memory_resolve only with the owner's explicit choice.`;

/** Requests whose params the SDK validates; a mismatch there surfaces as an internal error. */
const PARAM_SCHEMAS: Record<string, { safeParse(value: unknown): ParamCheck }> = {
  "initialize": InitializeRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
  "resources/list": ListResourcesRequestSchema,
  "resources/read": ReadResourceRequestSchema,
};

type ParamCheck =
  | { success: true }
  | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };

/**
 * Answers requests with malformed params as JSON-RPC "invalid params" (-32602)
 * before they reach the SDK, which would report them as internal errors.
 */
function checkParamsFirst(transport: LineTransport): void {
  const deliver = transport.onmessage;
  if (!deliver) return;
  transport.onmessage = <T extends JSONRPCMessage>(message: T) => {
    const record = message as Record<string, unknown>;
    const id = record.id;
    const schema = typeof record.method === "string" ? PARAM_SCHEMAS[record.method] : undefined;
    if (schema && (typeof id === "string" || typeof id === "number")) {
      const check = schema.safeParse(message);
      if (!check.success) {
        const issues = check.error.issues.map((i) =>
          `${i.path.map(String).join(".") || "request"}: ${i.message}`
        );
        transport.send({
          jsonrpc: "2.0",
          id,
          error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${issues.join("; ")}` },
        }).catch(() => {});
        return;
      }
    }
    deliver(message);
  };
}

/** Serves MCP on stdio until the client disconnects or a signal arrives; closes the session's run. */
export async function serveMcp(options: ServeOptions): Promise<void> {
  const log = options.log ?? ((line: string) => console.error(line));
  const { tools, missing } = servedTools(options.findCommand);
  if (missing.length > 0) log(`bimri mcp: not served: ${missing.join("; ")}`);
  const byName = new Map(tools.map((t) => [t.spec.name, t]));
  const paths = new StorePaths(options.root);
  const viewUri = pathToFileURL(join(options.root, "bimri.md")).href;
  const ctx: CommandContext = {
    root: options.root,
    json: false,
    readStdin: () => {
      throw new BimriError("usage", "standard input carries the MCP session; it cannot be read.");
    },
  };
  // A holder object, not a `let`: closures update it and readers must see the change.
  const mine: { current: SessionRun | null } = { current: null };
  const autoSession = `mcp-${crypto.randomUUID()}`;
  const inFlight = new Set<Promise<unknown>>();

  const server = new Server(
    { name: "bimri", title: "BIMRI shared memory", version: options.version },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
  );

  /**
   * What state.json says now of the run this session opened. A run ID names
   * this session's run only while the active run under it has this session's
   * actor and session key: a store replaced by an older copy (or restored
   * from a backup) can give the same ID to another agent's run, which the
   * session must neither write to by default nor close when it leaves.
   */
  const standing = (own: SessionRun): "ours" | "gone" | "foreign" | "unreadable" => {
    try {
      if (!storeExists(paths)) return "gone";
      const active = loadState(paths).active_runs[own.run];
      if (active === undefined) return "gone";
      // As start records it: an empty session maps nothing.
      const key = own.session === "" ? null : sessionKey(own.actor, own.session);
      return active.actor === own.actor && active.session_key === key ? "ours" : "foreign";
    } catch {
      return "unreadable"; // Let the verb report it.
    }
  };

  const prepare = (spec: ToolSpec, args: Record<string, unknown>): Record<string, unknown> => {
    const out = { ...args };
    const needRun = () => {
      if (mine.current === null) {
        throw new BimriError(
          "usage",
          `${spec.name}: run is required: no run was started in this MCP session. Call memory_start first.`,
        );
      }
      const own = mine.current;
      if (standing(own) === "foreign") {
        throw new BimriError(
          "refused",
          `${spec.name}: run ${own.run} is no longer this MCP session's run: the store now records another agent's run under that ID (the store was replaced or restored). Nothing was written. Call memory_start to open a new run.`,
        );
      }
      return own.run;
    };
    if (spec.session === "uses-run" && out.run === undefined) out.run = needRun();
    if (
      spec.session === "close" && out.run === undefined && out.actor === undefined &&
      out.session === undefined
    ) out.run = needRun();
    if (spec.session === "start") {
      if (mine.current !== null && ["gone", "foreign"].includes(standing(mine.current))) {
        mine.current = null;
      }
      const actor = (out.actor as string | undefined) ??
        mine.current?.actor ?? actorFromClientName(server.getClientVersion()?.name);
      // An empty session is no session (the CLI's `--session ""` maps nothing, so every
      // start would open another run): like an omitted one, it takes the session's identity.
      const session = (out.session as string | undefined) || mine.current?.session ||
        autoSession;
      // Compared as start compares them (actor lowercased, session trimmed); an invalid
      // actor is left to the verb, which refuses it in the CLI's words.
      let sameRun = true;
      if (mine.current !== null) {
        try {
          const normalized = requireActor(actor);
          sameRun = normalized === mine.current.actor &&
            sessionKey(normalized, session) ===
              sessionKey(mine.current.actor, mine.current.session);
        } catch {
          sameRun = true;
        }
      }
      if (mine.current !== null && !sameRun) {
        throw new BimriError(
          "refused",
          `this MCP session already has run ${mine.current.run} open as ${mine.current.actor}; close it with memory_close before starting another.`,
        );
      }
      out.actor = actor;
      out.session = session;
    }
    return out;
  };

  const call = async (name: string, rawArgs: unknown): Promise<CallToolResult> => {
    const served = byName.get(name);
    if (!served) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const { spec, command } = served;
    try {
      const args = prepare(spec, checkArguments(spec, rawArgs));
      const { flags, positionals } = parseCommandArgs(command, toArgv(spec, args));
      const result = await runCommand(command, ctx, flags, positionals);
      if (result.exitCode === 0 && spec.session === "start") {
        mine.current = {
          run: String(result.data.run),
          actor: String(result.data.actor ?? args.actor),
          session: String(args.session),
        };
      }
      if (
        result.exitCode === 0 && spec.session === "close" &&
        result.data.run === mine.current?.run
      ) {
        mine.current = null;
      }
      return toolResult(spec, result);
    } catch (error) {
      return errorResult(asBimriError(error));
    }
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => toolListing(t.spec)),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const pending = call(request.params.name, request.params.arguments);
    inFlight.add(pending);
    return pending.finally(() => inFlight.delete(pending));
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [{
      uri: viewUri,
      name: "bimri.md",
      title: "BIMRI working set",
      description:
        "The generated view of the accepted memory: Tier 1 facts and rules, Tier 2 current work, Tier 3 patterns.",
      mimeType: "text/markdown",
    }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    if (request.params.uri !== viewUri) {
      throw new McpError(-32002, `Resource not found: ${request.params.uri}`);
    }
    try {
      refuseSymlink(paths.view, "bimri.md");
      const bytes = readBytesOrNull(paths.view);
      if (bytes === null) {
        throw new BimriError(
          "unknown-record",
          "bimri.md does not exist yet; call memory_start to create the memory.",
        );
      }
      const text = decodeUtf8Strict(bytes);
      if (text === null) {
        throw new BimriError("store-corrupt", "bimri.md is not valid UTF-8; run doctor.");
      }
      return {
        contents: [{ uri: viewUri, mimeType: "text/markdown", text: visibleOutput(text) }],
      };
    } catch (error) {
      throw new McpError(ErrorCode.InternalError, `BIMRI ERROR: ${asBimriError(error).message}`);
    }
  });

  // stdout carries the protocol: anything a verb logs goes to stderr instead.
  const savedLog = console.log;
  const savedInfo = console.info;
  console.log = console.error;
  console.info = console.error;

  const transport = new LineTransport(options.streams);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  const stop = () => {
    transport.close().catch(() => {});
  };
  const signals = stopSignals(Deno.build.os);
  const listening: Deno.Signal[] = [];
  if (options.streams === undefined) {
    for (const signal of signals) {
      try {
        Deno.addSignalListener(signal, stop);
        listening.push(signal);
      } catch {
        // Signal not supported on this platform.
      }
    }
  }
  try {
    await server.connect(transport);
    checkParamsFirst(transport);
    await closed;
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    const left = mine.current === null ? "gone" : standing(mine.current);
    if (mine.current !== null && left === "foreign") {
      log(
        `bimri mcp: client disconnected; run ${mine.current.run} now belongs to another agent and was left open.`,
      );
    } else if (mine.current !== null && left !== "gone") {
      const close = byName.get("memory_close");
      const result = close
        ? await call("memory_close", {
          run: mine.current.run,
          outcome: "partial",
          summary: DISCONNECT_SUMMARY,
        })
        : null;
      const text = result?.content.map((c) => c.type === "text" ? c.text : "").join("") ?? "";
      log(`bimri mcp: client disconnected; ${text.trim() || "run left open"}`);
    }
  } finally {
    for (const signal of listening) Deno.removeSignalListener(signal, stop);
    console.log = savedLog;
    console.info = savedInfo;
  }
}
