import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, diffTrees, hashTree, startRun, tempStore } from "../helpers/cli.ts";
import { callTool, connectMcp, dataOf, textOf } from "./mcp_support.ts";

const ALL_TOOLS = [
  "memory_start",
  "memory_journal",
  "memory_propose",
  "memory_sync",
  "memory_close",
  "memory_recall",
  "memory_status",
  "memory_review",
  "memory_resolve",
  "memory_share_pull",
];

Deno.test("an MCP client runs a full session and the CLI sees the result", async () => {
  const root = await tempStore();
  const mcp = await connectMcp(root);
  try {
    const { tools } = await mcp.client.listTools();
    assertEquals(tools.map((t) => t.name), ALL_TOOLS);
    const propose = tools.find((t) => t.name === "memory_propose")!;
    for (
      const arg of [
        "run",
        "key",
        "tier",
        "new_subject",
        "operation",
        "kind",
        "importance",
        "status",
        "trust",
        "source",
        "tags",
        "text",
        "rationale",
        "confidence",
        "observations",
        "evidence",
        "falsifier",
        "target",
      ]
    ) assert(propose.inputSchema.properties?.[arg], `memory_propose lacks ${arg}`);
    const resolve = tools.find((t) => t.name === "memory_resolve")!;
    assertEquals(resolve.inputSchema.required, ["conflict", "choose", "human_approved"]);
    assertMatch(resolve.description ?? "", /only after the owner/i);

    const start = await callTool(mcp, "memory_start", { actor: "claude" });
    assertEquals(dataOf(start).run, "R000001");
    assertMatch(textOf(start), /^BIMRI RUN HANDLE: R000001$/m);
    assertMatch(textOf(start), /^=== BIMRI BRIEF R000001 \| \d{4}-\d{2}-\d{2} \| claude ===$/m);

    const { resources } = await mcp.client.listResources();
    assertEquals(resources.map((r) => r.name), ["bimri.md"]);
    const view = await mcp.client.readResource({ uri: resources[0].uri });
    const viewText = (view.contents[0] as { text: string }).text;
    assertEquals(viewText, Deno.readTextFileSync(`${root}/bimri.md`));

    const journal = await callTool(mcp, "memory_journal", {
      text: "Checkout retries reuse the idempotency key.",
      importance: 4,
    });
    assertEquals(dataOf(journal), { ok: true, run: "R000001", entry_id: "R000001-E001" });

    const t1 = await callTool(mcp, "memory_propose", {
      tier: 1,
      new_subject: true,
      key: "project.timezone",
      kind: "rule",
      source: "user",
      trust: "confirmed",
      tags: ["time", "style"],
      rationale: "Direct owner statement.",
      text: "Store every timestamp in UTC.",
    });
    assertEquals(dataOf(t1).proposal_id, "R000001-Q001");
    const t2 = await callTool(mcp, "memory_propose", {
      tier: 2,
      new_subject: true,
      key: "checkout.next-step",
      importance: 4,
      tags: ["checkout", "retries"],
      text: "Verify checkout retries under concurrent requests.",
    });
    assertEquals(textOf(t2), "R000001-Q002\n");
    const t3 = await callTool(mcp, "memory_propose", {
      tier: 3,
      new_subject: true,
      key: "ops.checkout-spikes",
      evidence: ["R000001-E001"],
      falsifier: "A sale passes without a retry spike.",
      text: "Checkout retry spikes follow promotional emails.",
    });
    assertEquals(dataOf(t3).proposal_id, "R000001-Q003");

    const sync = await callTool(mcp, "memory_sync");
    assertEquals(
      (dataOf(sync).memory as Record<string, number>).applied,
      3,
      textOf(sync),
    );
    assertMatch(textOf(sync), /^BIMRI: synced R000001; applied 3, /m);

    const recall = await callTool(mcp, "memory_recall", { key: "checkout.next-step" });
    const matches = dataOf(recall).matches as Record<string, unknown>[];
    assertEquals(matches.length, 1);
    assertEquals(matches[0].key, "checkout.next-step");
    assertEquals(matches[0].location, "HOT");
    const cliRecall = await bimri(root, ["recall", "--key", "checkout.next-step"]);
    assertEquals(textOf(recall), cliRecall.stdout, "MCP text equals the CLI's TSV");

    const query = await callTool(mcp, "memory_recall", { query: "timestamp UTC", rank: false });
    assertEquals((dataOf(query).matches as Record<string, unknown>[])[0].key, "project.timezone");
    const cliQuery = await bimri(root, ["recall", "--query", "timestamp UTC", "--json"]);
    assertEquals(dataOf(query), JSON.parse(cliQuery.stdout), "rank:false: no score, as the CLI");
    const cliRanked = await bimri(root, ["recall", "--query", "timestamp UTC", "--rank", "--json"]);
    for (const args of [{ query: "timestamp UTC" }, { query: "timestamp UTC", rank: true }]) {
      const ranked = await callTool(mcp, "memory_recall", args);
      assertEquals(dataOf(ranked), JSON.parse(cliRanked.stdout), "ranked unless rank:false");
      assertEquals(typeof (dataOf(ranked).matches as Record<string, unknown>[])[0].score, "number");
    }
    const none = await callTool(mcp, "memory_recall", { query: "zeppelin" });
    assert(!none.isError, "no match is a result, not an error");
    assertEquals(dataOf(none).total, 0);

    const again = await callTool(mcp, "memory_start");
    assertEquals(dataOf(again).run, "R000001", "one run per MCP session");
    assertEquals(dataOf(again).resumed, true);

    const status = await callTool(mcp, "memory_status");
    assertEquals(dataOf(status).revision, 3);
    assertMatch(textOf(status), /runs 1 \| active 1/);

    const close = await callTool(mcp, "memory_close", {
      outcome: "success",
      summary: "Checkout memory recorded.",
    });
    assertEquals(dataOf(close).closed, true);
    assertMatch(textOf(close), /^BIMRI: run R000001 closed\.$/m);
  } finally {
    await mcp.close();
  }

  const status = await bimri(root, ["status"]);
  assertMatch(status.stdout, /runs 1 \| active 0/);
  assertMatch(status.stdout, /^Outcomes: success=1$/m);
  const log = Deno.readTextFileSync(`${root}/.bimri/log/R000001.md`);
  assertMatch(log, /^\[ID:R000001-E001\] \[I:4\] Checkout retries reuse the idempotency key\.$/m);
  assertMatch(log, /^\[OUTCOME:success\] Checkout memory recorded\.$/m);
  const view = Deno.readTextFileSync(`${root}/bimri.md`);
  assertMatch(view, /Store every timestamp in UTC\./);
  assertMatch(view, /Verify checkout retries under concurrent requests\./);
  assertMatch(view, /Checkout retry spikes follow promotional emails\./);
  const recall = await bimri(root, ["recall", "--key", "project.timezone"]);
  assertEquals(recall.code, 0);
  assertMatch(recall.stdout, /^HOT\tproject\.timezone\t/m);
  const doctor = await bimri(root, ["doctor"]);
  assertEquals(doctor.code, 0, doctor.stdout + doctor.stderr);
});

Deno.test("a client that disconnects without closing leaves its run closed as partial", async () => {
  const root = await tempStore();
  const mcp = await connectMcp(root, "Claude Desktop");
  const start = await callTool(mcp, "memory_start");
  assertEquals(dataOf(start).actor, "claude-desktop", "actor defaults to the client's name");
  await callTool(mcp, "memory_propose", {
    tier: 2,
    new_subject: true,
    key: "release.blocker",
    text: "Vendor API returns 502 under load.",
  });
  await mcp.close();
  assertMatch(mcp.stderr(), /client disconnected; BIMRI: run R000001 closed\./);
  const status = await bimri(root, ["status"]);
  assertMatch(status.stdout, /runs 1 \| active 0/);
  assertMatch(status.stdout, /^Outcomes: partial=1$/m);
  const log = Deno.readTextFileSync(`${root}/.bimri/log/R000001.md`);
  assertMatch(log, /^\[OUTCOME:partial\] MCP client disconnected without closing the run\.$/m);
  const recall = await bimri(root, ["recall", "--key", "release.blocker"]);
  assertEquals(recall.code, 0, "close applied the pending proposal");
});

Deno.test("tool errors carry the CLI's messages and never write", async () => {
  const root = await tempStore();
  const cliRun = await startRun(root, "codex");
  const mcp = await connectMcp(root);
  try {
    const run = dataOf(await callTool(mcp, "memory_start", { actor: "claude" })).run as string;
    const cases: [string, Record<string, unknown>, string[]][] = [
      ["memory_journal", { text: "line one\nline two" }, [
        "journal",
        "--run",
        run,
        "--text",
        "line one\nline two",
      ]],
      ["memory_journal", { text: "fine", importance: 9 }, [
        "journal",
        "--run",
        run,
        "--text",
        "fine",
        "--importance",
        "9",
      ]],
      ["memory_journal", { run: "R000099", text: "x" }, [
        "journal",
        "--run",
        "R000099",
        "--text",
        "x",
      ]],
      ["memory_journal", { run: "run-1", text: "x" }, ["journal", "--run", "run-1", "--text", "x"]],
      ["memory_propose", { key: "Bad Key", text: "x" }, [
        "propose",
        "--run",
        run,
        "--key",
        "Bad Key",
        "--text",
        "x",
      ]],
      ["memory_propose", { key: "a.b", tier: 7, text: "x" }, [
        "propose",
        "--run",
        run,
        "--key",
        "a.b",
        "--tier",
        "7",
        "--text",
        "x",
      ]],
      ["memory_propose", { key: "a.b", needs_human: true, text: "x" }, [
        "propose",
        "--run",
        run,
        "--key",
        "a.b",
        "--needs-human",
        "--text",
        "x",
      ]],
      ["memory_close", { outcome: "great" }, ["close", "--run", run, "--outcome", "great"]],
      ["memory_close", { run: "R000042" }, ["close", "--run", "R000042"]],
      ["memory_recall", {}, ["recall"]],
      ["memory_resolve", { conflict: "C000042", choose: "current", human_approved: true }, [
        "resolve",
        "C000042",
        "--choose",
        "current",
        "--human-approved",
      ]],
      ["memory_resolve", { conflict: "C000001", choose: "current", human_approved: false }, [
        "resolve",
        "C000001",
        "--choose",
        "current",
      ]],
      ["memory_review", { conflict: "bogus" }, ["review", "bogus"]],
    ];
    for (const [tool, args, argv] of cases) {
      const before = hashTree(root);
      const result = await callTool(mcp, tool, args);
      assertEquals(result.isError, true, `${tool} ${JSON.stringify(args)}: ${textOf(result)}`);
      assertEquals(diffTrees(before, hashTree(root)), null, `${tool} ${JSON.stringify(args)}`);
      const cli = await bimri(root, argv);
      assertEquals(cli.code, 2, argv.join(" "));
      assertEquals(textOf(result).trim(), cli.stderr.trim(), `${tool} vs ${argv.join(" ")}`);
    }
    // Shape errors are refused before the verb runs.
    const shapes: [string, unknown, RegExp][] = [
      ["memory_journal", { text: 5 }, /^BIMRI ERROR: memory_journal: text must be a string\.$/],
      ["memory_journal", {}, /^BIMRI ERROR: memory_journal: text is required\.$/],
      ["memory_journal", { text: "x", bogus: 1 }, /unknown argument "bogus"/],
      ["memory_propose", { key: "a.b", tags: "x,y" }, /tags must be an array of strings/],
      ["memory_propose", { key: "a.b", tags: ["x,y"] }, /cannot contain commas/],
      ["memory_status", { verbose: true }, /takes no arguments/],
      ["memory_resolve", { conflict: "C000001", choose: "current" }, /human_approved is required/],
    ];
    for (const [tool, args, pattern] of shapes) {
      const before = hashTree(root);
      const result = await mcp.client.callTool({
        name: tool,
        arguments: args as Record<string, unknown>,
      });
      assertEquals(result.isError, true, tool);
      assertMatch(textOf(result as Parameters<typeof textOf>[0]), pattern);
      assertEquals(diffTrees(before, hashTree(root)), null, `${tool} ${JSON.stringify(args)}`);
    }
    // A second actor in the same MCP session is refused: one run per session.
    const other = await callTool(mcp, "memory_start", { actor: "cursor" });
    assertEquals(other.isError, true);
    assertMatch(textOf(other), /already has run R000002 open/);
  } finally {
    await mcp.close();
  }
  // The CLI agent's run is untouched by the MCP session's disconnect.
  const status = await bimri(root, ["status"]);
  assertMatch(status.stdout, new RegExp(`Active runs: ${cliRun} \\(codex\\)`));
});
