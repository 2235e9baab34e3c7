/**
 * start, sync and close of a shared store with nothing pending load only team
 * memory's idle check (commands/share_wiring.ts, engine/share/idle.ts), and
 * leave the changes they commit for the next export (`share status`, which
 * the pre-commit hook runs, a pull, any other share verb). What an earlier
 * command left for team memory (a commit a crash left applying, own records
 * git removed) must still be found and finished by the same command, and the
 * MCP server (one process for every verb) must still export.
 */
import { join } from "node:path";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, must, startRun } from "../helpers/cli.ts";
import {
  agentSets,
  gitOk,
  publish,
  sharedClones,
  sharedStore as sharedStoreOf,
} from "../helpers/share.ts";
import { callTool, connectMcp, dataOf, textOf } from "./mcp_support.ts";

/** A shared store with one subject, and the path of its own replica folder. */
function sharedStore(): Promise<{ root: string; own: string }> {
  return sharedStoreOf(undefined, { "team.rule": "Review every migration." });
}

/** The record files of a replica folder. */
function records(folder: string): string[] {
  return [...Deno.readDirSync(folder)].map((e) => e.name).filter((n) => /^\d{8}\.json$/.test(n))
    .sort();
}

/**
 * Commits a change of run `run` with a sync killed after its head switch,
 * before its final decision: the commit is durable, left applying, and no
 * record or pending-list line names it.
 */
async function commitLeftApplying(root: string, run: string, text: string): Promise<void> {
  await must(root, ["propose", "--run", run, "--key", "team.rule", "--text", text]);
  const sync = await bimri(root, ["sync", "--run", run], { env: { BIMRI_FAULT: "after-view" } });
  assertEquals(sync.code, 86, sync.stderr); // the fault point's exit: killed after the commit
}

Deno.test("close finds under the lock the commit a crash left applying, finishes and exports it; a change without a crash waits for the export", async () => {
  const { root, own } = await sharedStore();
  const before = records(own);
  const run = await startRun(root);
  await commitLeftApplying(root, run, "Review every migration twice.");
  assertEquals(records(own), before, "the crash came before any export");

  // close starts with the idle check only; under the lock it sees the head's
  // commit left applying, loads the export, runs again: finishing the commit
  // then exports it.
  const close = await must(root, ["close", "--run", run, "--outcome", "success"]);
  assertMatch(close, new RegExp(`BIMRI: run ${run} closed\\.`));
  assertEquals(close.match(/closed\./g)?.length, 1, "close ran to the end once");
  assertEquals(records(own).length, before.length + 1, "the change was exported");
  const last = JSON.parse(Deno.readTextFileSync(join(own, records(own).at(-1)!)));
  assertEquals(last.kind, "change");
  assertEquals(last.entry?.text, "Review every migration twice.");
  assertMatch(await must(root, ["doctor"]), /PASSED/);

  // A change committed without a crash is left by close for the next export.
  const next = await startRun(root);
  await must(root, ["propose", "--run", next, "--key", "team.rule", "--text", "Review it."]);
  await must(root, ["close", "--run", next, "--outcome", "success"]);
  assertEquals(records(own).length, before.length + 1, "close left its change for the export");
  await must(root, ["share", "status"]);
  assertEquals(records(own).length, before.length + 2, "share status exported it");
  await Deno.remove(root, { recursive: true });
});

Deno.test("start finds the commit a crash left applying though its idle check saw nothing, finishes and exports it; a synced change waits for the export", async () => {
  const { root, own } = await sharedStore();
  const run = await startRun(root);
  await commitLeftApplying(root, run, "Review every migration three times.");
  const before = records(own);

  const start = await must(root, ["start", "--actor", "claude"]);
  assertEquals(start.match(/BIMRI RUN HANDLE: /g)?.length, 1, "one brief, one run");
  assertMatch(start, /Team memory: no records from other clones are waiting\./);
  assertEquals(records(own).length, before.length + 1, "the change was exported");
  const last = JSON.parse(Deno.readTextFileSync(join(own, records(own).at(-1)!)));
  assertEquals(last.entry?.text, "Review every migration three times.");
  assertEquals(/changes? of this clone waits? for the next export/.test(start), false, start);

  // A change a sync committed without a crash is left for the next export,
  // and start's brief says so.
  const next = await startRun(root);
  await must(root, ["propose", "--run", next, "--key", "team.rule", "--text", "Review it."]);
  await must(root, ["sync", "--run", next]);
  const brief = await must(root, ["start", "--actor", "claude"]);
  assertMatch(brief, /Team memory: 1 changes? of this clone waits? for the next export/);
  assertEquals(records(own).length, before.length + 1, "neither sync nor start exported it");
  await Deno.remove(root, { recursive: true });
});

Deno.test("start restores an own record git removed, and counts records of another clone", async () => {
  const { root, own } = await sharedStore();
  const [first] = records(own);
  const bytes = Deno.readFileSync(join(own, first));
  Deno.removeSync(join(own, first));
  const start = await must(root, ["start", "--actor", "claude"]);
  assertEquals(Deno.readFileSync(join(own, first)), bytes, "restored byte for byte");
  assertMatch(start, /no records from other clones are waiting/);

  // Another replica's folder with two records this clone has not pulled.
  const other = join(root, ".bimri-share", "a".repeat(26));
  Deno.mkdirSync(other);
  Deno.writeFileSync(join(other, "00000001.json"), bytes);
  Deno.writeFileSync(join(other, "00000002.json"), bytes);
  const counted = await must(root, ["start", "--actor", "codex"]);
  assertMatch(counted, /Team memory: 2 records from other clones are waiting/);
  await Deno.remove(root, { recursive: true });
});

Deno.test("start passes over a replica folder a pull found quiet, yet counts a record git brings into it", async () => {
  const { base, clones: [a, b] } = await sharedClones({ "team.rule": "Review every migration." });
  const replicaOf = (clone: string) =>
    JSON.parse(Deno.readTextFileSync(join(clone, ".bimri", "replica.local.json")))
      .replica as string;
  const folder = join(b, ".bimri-share", replicaOf(a));
  const quiet = () =>
    JSON.parse(Deno.readTextFileSync(join(b, ".bimri", "share.local.json"))).quiet_folders;
  // The pull found every record of a's folder imported and noted the folder's mtime.
  assertEquals(quiet(), { [replicaOf(a)]: Deno.lstatSync(folder).mtime!.getTime() });
  assertMatch(
    await must(b, ["start", "--actor", "claude"]),
    /no records from other clones are waiting/,
  );

  // git brings a's next two records, the first of them missing (a gap): the folder's
  // mtime moved, so start lists it and counts the one there.
  await agentSets(a, "codex", { "team.rule": "Review every migration twice." });
  await agentSets(a, "codex", { "team.rule": "Review every migration three times." });
  await publish(a, "a's next rules");
  await gitOk(b, ["pull", "-q", "--no-edit", "origin", "main"]);
  const names = [...Deno.readDirSync(folder)].map((e) => e.name).filter((n) =>
    /^\d{8}\.json$/.test(n)
  )
    .sort();
  const next = names[names.length - 2];
  Deno.removeSync(join(folder, next));
  assertMatch(
    await must(b, ["start", "--actor", "claude"]),
    /Team memory: 1 records? from other clones (is|are) waiting/,
  );
  await gitOk(b, ["checkout", "--", join(".bimri-share", replicaOf(a), next)]);

  // The same with the folder's mtime put back to the one the pull noted (a change
  // within the mtime's resolution): the record after the last imported is there.
  const noted = quiet()[replicaOf(a)];
  Deno.utimeSync(folder, new Date(), new Date(noted));
  assertMatch(
    await must(b, ["start", "--actor", "claude"]),
    /Team memory: 2 records? from other clones (is|are) waiting/,
  );
  await must(b, ["share", "pull"]);
  assertMatch(
    await must(b, ["start", "--actor", "claude"]),
    /no records from other clones are waiting/,
  );
  await Deno.remove(base, { recursive: true });
});

Deno.test("the MCP server (one process, every verb) leaves a sync's change for the export, as the CLI does, also after a share verb", async () => {
  const { root, own } = await sharedStore();
  const before = records(own).length;
  const mcp = await connectMcp(root);
  try {
    for (
      const [round, text] of ["Review every migration before merging.", "Review twice."].entries()
    ) {
      const start = await callTool(mcp, "memory_start", { actor: "claude" });
      assertEquals(start.isError ?? false, false, textOf(start));
      const run = dataOf(start).run as string;
      const propose = await callTool(mcp, "memory_propose", { run, key: "team.rule", text });
      assertEquals(propose.isError ?? false, false, textOf(propose));
      const sync = await callTool(mcp, "memory_sync", { run });
      assertEquals(sync.isError ?? false, false, textOf(sync));
      const close = await callTool(mcp, "memory_close", { run, outcome: "success" });
      assertEquals(close.isError ?? false, false, textOf(close));
      assertEquals(records(own).length, before + round, `round ${round}: a verb exported`);
      // A share verb in the same process exports what waits; the next round's
      // verbs decide again and leave their change for the next export.
      const pull = await callTool(mcp, "memory_share_pull", {});
      assertEquals(pull.isError ?? false, false, textOf(pull));
      assertEquals(records(own).length, before + round + 1, `round ${round}: the pull exported`);
    }
  } finally {
    await mcp.close();
  }
  await Deno.remove(root, { recursive: true });
});
