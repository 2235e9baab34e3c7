import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, commandPrefix, diffTrees, hashTree, startRun, tempStore } from "../helpers/cli.ts";
import { handshake, rawSession, serverEnv } from "./mcp_support.ts";

function request(id: number, method: string, params?: unknown): string {
  return JSON.stringify(
    params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params },
  );
}

function call(id: number, name: string, args: unknown): string {
  return request(id, "tools/call", { name, arguments: args });
}

Deno.test("malformed requests get JSON-RPC or tool errors and change nothing", async () => {
  const root = await tempStore();
  const cliRun = await startRun(root, "codex");
  const before = hashTree(root);
  const session = await rawSession(root, [
    "not json at all",
    "[]",
    ...handshake(),
    JSON.stringify({ jsonrpc: "1.0", id: 11, method: "tools/list" }),
    request(12, "memory_start"),
    call(13, "memory_nope", {}),
    request(14, "tools/call", {}),
    call(15, "memory_journal", [1, 2]),
    call(16, "memory_journal", { run: cliRun, text: "nul\u0000inside" }),
    request(17, "resources/read", { uri: "file:///etc/passwd" }),
    call(18, "memory_close", {}),
    call(19, "memory_sync", { run: cliRun, extra: 1 }),
    call(20, "memory_propose", { run: cliRun, key: "a.b", tier: "two", text: "x" }),
    call(21, "memory_journal", { text: "no run in this session" }),
    // Names every JavaScript object inherits are unknown arguments like any other.
    call(23, "memory_sync", { run: cliRun, constructor: 1 }),
    call(24, "memory_sync", { run: cliRun, toString: "x" }),
    request(22, "tools/list"),
  ]);
  assertEquals(session.code, 0, session.stderr);
  const byId = new Map(session.replies.map((r) => [JSON.stringify(r.id), r]));
  const nullReplies = session.replies.filter((r) => r.id === null);
  assertEquals(
    nullReplies.map((r) => (r.error as { code: number }).code),
    [-32700, -32600],
    "unparseable and non-JSON-RPC input is answered with id null",
  );
  const errorCode = (id: number) =>
    (byId.get(String(id))?.error as { code: number } | undefined)?.code;
  assertEquals(errorCode(11), -32600, "jsonrpc 1.0 is not a request");
  assertEquals(errorCode(12), -32601, "tools are not methods");
  assertEquals(errorCode(13), -32602, "unknown tool");
  assertEquals(errorCode(14), -32602, "tools/call without a name");
  assertEquals(errorCode(15), -32602, "arguments must be an object");
  assertEquals(errorCode(17), -32002, "only bimri.md is a resource");
  const toolError = (id: number) => {
    const result = byId.get(String(id))?.result as
      | { isError?: boolean; content: { text: string }[] }
      | undefined;
    assert(result, `no result for ${id}`);
    assertEquals(result.isError, true, `${id}: ${JSON.stringify(result)}`);
    return result.content[0].text;
  };
  assertMatch(toolError(16), /^BIMRI ERROR: journal text contains control characters\.$/);
  assertMatch(toolError(18), /no run was started in this MCP session/);
  assertMatch(toolError(19), /unknown argument "extra"/);
  assertMatch(toolError(20), /tier must be an integer/);
  assertMatch(toolError(21), /Call memory_start first/);
  assertMatch(toolError(23), /unknown argument "constructor"/);
  assertMatch(toolError(24), /unknown argument "toString"/);
  const tools = (byId.get("22")?.result as { tools: unknown[] }).tools;
  assertEquals(tools.length, 10, "the server keeps serving after bad input");
  assertEquals(diffTrees(before, hashTree(root)), null);
  const status = await bimri(root, ["status"]);
  assertMatch(status.stdout, new RegExp(`Active runs: ${cliRun} \\(codex\\)`), status.stdout);
});

Deno.test("SIGTERM closes the MCP session's run as partial and exits", {
  // Skipped on Windows: there is no SIGTERM to deliver there (Deno's kill ends the
  // process at once, with nothing the server can catch); the server listens for
  // SIGINT and SIGBREAK instead (stopSignals, tests/unit/os_branches_test.ts).
  ignore: Deno.build.os === "windows",
}, async () => {
  const root = await tempStore();
  const [command, ...prefix] = commandPrefix();
  const child = new Deno.Command(command, {
    args: [...prefix, "--root", root, "mcp"],
    cwd: root,
    env: serverEnv(),
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(
    new TextEncoder().encode(
      [...handshake(), call(1, "memory_start", { actor: "zed" })].map((l) => l + "\n").join(""),
    ),
  );
  // Wait for the start reply itself (an event, not a delay) before signalling.
  const reader = child.stdout.getReader();
  let seen = "";
  while (!/"id":1[,}]/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += new TextDecoder().decode(value);
  }
  assertMatch(seen, /BIMRI RUN HANDLE: R000001/);
  child.kill("SIGTERM");
  reader.releaseLock();
  const [status] = await Promise.all([child.status, child.stdout.cancel(), child.stderr.cancel()]);
  await writer.close().catch(() => {});
  assertEquals(status.code, 0);
  const cli = await bimri(root, ["status"]);
  assertMatch(cli.stdout, /runs 1 \| active 0/);
  assertMatch(cli.stdout, /^Outcomes: partial=1$/m);
});

Deno.test("end of input does not wait for a request the client cancelled", async () => {
  const root = await tempStore();
  const began = performance.now();
  const session = await rawSession(root, [
    ...handshake(),
    call(1, "memory_start", { actor: "zed" }),
    // Still loading the search modules when the cancellation arrives: never answered.
    call(2, "memory_recall", { query: "anything" }),
    JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 2, reason: "the user stopped it" },
    }),
  ]);
  const seconds = (performance.now() - began) / 1000;
  assertEquals(session.code, 0);
  assertEquals(
    session.replies.filter((r) => r.id === 2).length,
    0,
    "no answer to a cancelled call",
  );
  // The drain limit is 30 s; the server has no reason to come near it.
  assert(seconds < 15, `exit took ${seconds.toFixed(1)} s`);
  const cli = await bimri(root, ["status"]);
  assertMatch(cli.stdout, /runs 1 \| active 0/);
});
