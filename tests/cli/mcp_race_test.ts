import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, type CliResult, newSubject, startRun, tempStore } from "../helpers/cli.ts";
import { callTool, connectMcp, dataOf, type McpSession, textOf } from "./mcp_support.ts";

const NOW = { BIMRI_NOW: "2026-12-02T12:00:00Z" };

/** An agent, either a CLI agent or an MCP client: the verbs the race needs, same output shape. */
type Agent = {
  propose(key: string, text: string): Promise<void>;
  sync(): Promise<string>;
  done(): Promise<void>;
};

async function cliAgent(root: string, actor: string): Promise<Agent> {
  const run = await startRun(root, actor, []);
  const must = (r: CliResult, what: string) => {
    assertEquals(r.code, 0, `${what}: ${r.stderr}`);
    return r.stdout;
  };
  return {
    propose: async (key, text) =>
      void must(
        await bimri(root, ["propose", "--run", run, "--key", key, "--text", text], { env: NOW }),
        "propose",
      ),
    sync: async () => must(await bimri(root, ["sync", "--run", run], { env: NOW }), "sync"),
    done: () => Promise.resolve(),
  };
}

async function mcpAgent(root: string, actor: string): Promise<Agent & { session: McpSession }> {
  const session = await connectMcp(root, actor, NOW);
  dataOf(await callTool(session, "memory_start", { actor }));
  return {
    session,
    propose: async (key, text) =>
      void dataOf(await callTool(session, "memory_propose", { key, text })),
    sync: async () => {
      const result = await callTool(session, "memory_sync");
      dataOf(result);
      return textOf(result);
    },
    done: () => session.close(),
  };
}

/** Seeds api.timeout, then alpha and beta both change it from the same base. */
async function race(alphaViaMcp: boolean, alphaFirst: boolean) {
  const root = await tempStore();
  const seed = await startRun(root, "seed");
  for (
    const args of [
      newSubject(seed, "api.timeout", "Timeout is 30 seconds."),
      ["close", "--run", seed, "--outcome", "success", "--summary", "Seeded."],
    ]
  ) assertEquals((await bimri(root, args, { env: NOW })).code, 0);
  const alpha = alphaViaMcp ? await mcpAgent(root, "alpha") : await cliAgent(root, "alpha");
  const beta = await cliAgent(root, "beta");
  await alpha.propose("api.timeout", "Timeout is 45 seconds.");
  await beta.propose("api.timeout", "Timeout is 60 seconds.");
  const first = alphaFirst ? await alpha.sync() : await beta.sync();
  const second = alphaFirst ? await beta.sync() : await alpha.sync();
  // Runs stay open (the comparison needs no close); only the MCP server process is ended.
  await alpha.done();
  const review = await bimri(root, ["review"], { env: NOW });
  return {
    first,
    second,
    review: review.stdout,
    conflict: Deno.readTextFileSync(`${root}/.bimri/conflicts/C000001.json`),
    conflicts: [...Deno.readDirSync(`${root}/.bimri/conflicts`)].length,
    view: Deno.readTextFileSync(`${root}/bimri.md`),
  };
}

for (const alphaFirst of [true, false]) {
  Deno.test(`an MCP client racing a CLI agent raises the same conflict as two CLI agents (MCP ${alphaFirst ? "first" : "second"})`, async () => {
    const [viaCli, viaMcp] = await Promise.all([race(false, alphaFirst), race(true, alphaFirst)]);
    assertMatch(viaMcp.second, /new concurrent conflicts 1\b/);
    assertMatch(viaMcp.second, /MEMORY CONFLICT C000001\b/);
    assertEquals(viaMcp.conflicts, 1);
    assertEquals(viaMcp.first, viaCli.first);
    assertEquals(viaMcp.second, viaCli.second);
    assertEquals(viaMcp.conflict, viaCli.conflict, "conflict record byte-identical");
    assertEquals(viaMcp.review, viaCli.review);
    assertEquals(viaMcp.view, viaCli.view);
  });
}

Deno.test("simultaneous MCP and CLI syncs on one key raise exactly one conflict", async () => {
  const root = await tempStore();
  const seed = await startRun(root, "seed");
  await bimri(root, newSubject(seed, "api.timeout", "Timeout is 30 seconds."));
  await bimri(root, ["close", "--run", seed, "--outcome", "success"]);
  const alpha = await mcpAgent(root, "alpha");
  const beta = await cliAgent(root, "beta");
  try {
    await alpha.propose("api.timeout", "Timeout is 45 seconds.");
    await beta.propose("api.timeout", "Timeout is 60 seconds.");
    const outputs = await Promise.all([alpha.sync(), beta.sync()]);
    const conflicted = outputs.filter((o) => /new concurrent conflicts 1\b/.test(o));
    const applied = outputs.filter((o) => /applied 1, .*new concurrent conflicts 0\b/.test(o));
    assertEquals([conflicted.length, applied.length], [1, 1], outputs.join("\n---\n"));
    const record = JSON.parse(Deno.readTextFileSync(`${root}/.bimri/conflicts/C000001.json`));
    assertEquals(record.type, "stale-base");
    assertEquals(record.key, "api.timeout");
    assert([...Deno.readDirSync(`${root}/.bimri/conflicts`)].length === 1);
    // The owner's question goes through MCP too: read-only review, then an approved answer.
    const review = await callTool(alpha.session, "memory_review");
    assertEquals(dataOf(review).total, 1);
    assertMatch(textOf(review), /MEMORY CONFLICT C000001\b/);
    const refused = await callTool(alpha.session, "memory_resolve", {
      conflict: "C000001",
      choose: "current",
      human_approved: false,
    });
    assertEquals(refused.isError, true);
    assertMatch(textOf(refused), /--human-approved/);
    const resolved = await callTool(alpha.session, "memory_resolve", {
      conflict: "C000001",
      choose: "current",
      human_approved: true,
    });
    assertEquals(textOf(resolved), "BIMRI: C000001 resolved with current.\n");
    assertEquals(dataOf(resolved).conflict_id, "C000001");
    const after = await bimri(root, ["review"]);
    assertMatch(after.stdout, /Actionable concurrent conflicts: 0\b/);
  } finally {
    await alpha.done();
  }
});
