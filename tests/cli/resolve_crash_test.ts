/**
 * Crash injection inside `resolve`: the process dies between durable steps
 * (BIMRI_FAULT), and the next resolve either finalizes a proven committed
 * effect without applying it twice, or requires the same choice and applies
 * it once. While the answer is applying, later same-key intents are held.
 */
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  expectOk as ok,
  newSubject,
  readStoreJson as json,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

function copyTree(from: string, to: string): void {
  Deno.mkdirSync(to, { recursive: true });
  for (const entry of Deno.readDirSync(from)) {
    const a = join(from, entry.name);
    const b = join(to, entry.name);
    if (entry.isDirectory) copyTree(a, b);
    else Deno.copyFileSync(a, b);
  }
}

function archiveText(root: string): string {
  const dir = join(root, ".bimri", "archive");
  return [...Deno.readDirSync(dir)].map((e) => Deno.readTextFileSync(join(dir, e.name))).join("");
}

function revisionCount(root: string): number {
  return [...Deno.readDirSync(join(root, ".bimri", "revisions"))].length;
}

type Template = { root: string; losers: string[]; conflict: string; head: number; spare: string };

/**
 * A store with one open conflict on `task.alpha` holding two candidates
 * (R000003-Q001, R000004-Q001) and one more active run (`spare`) that has
 * observed the same generation, for same-key intents during a resolution.
 */
async function buildTemplate(): Promise<Template> {
  const root = await tempStore("bimri-resolve-crash-");
  const seed = await startRun(root, "seed");
  ok(
    await bimri(root, newSubject(seed, "task.alpha", "Alpha v1.")),
    "seed",
  );
  ok(await bimri(root, ["close", "--run", seed]), "seed close");
  const [w, l1, l2] = [
    await startRun(root, "w"),
    await startRun(root, "l1"),
    await startRun(root, "l2"),
  ];
  ok(
    await bimri(root, ["propose", "--run", w, "--key", "task.alpha", "--text", "Alpha from w."]),
    "w",
  );
  const losers = [];
  for (const [run, text] of [[l1, "Alpha from l1."], [l2, "Alpha from l2."]]) {
    losers.push(
      ok(await bimri(root, ["propose", "--run", run, "--key", "task.alpha", "--text", text]), "l")
        .stdout.trim(),
    );
  }
  ok(await bimri(root, ["sync", "--run", w]), "sync w");
  ok(await bimri(root, ["sync", "--run", l1]), "sync l1");
  ok(await bimri(root, ["sync", "--run", l2]), "sync l2");
  const spare = await startRun(root, "spare");
  const conflict = json(root, `decisions/${losers[0]}.json`).conflict_id as string;
  assertEquals(json(root, `conflicts/${conflict}.json`).proposal_ids, losers);
  return { root, losers, conflict, head: json(root, "state.json").head_revision as number, spare };
}

let template: Template | null = null;
async function fresh(): Promise<Template> {
  template ??= await buildTemplate();
  const root = await tempStore("bimri-resolve-crash-");
  copyTree(template.root, root);
  return { ...template, root };
}

function resolveArgs(t: Template, choice: string): string[] {
  return ["resolve", t.conflict, "--choose", choice, "--human-approved"];
}

function assertResolvedWith(t: Template, chosen: string, revisionAfter: number): void {
  const resolution = json(t.root, `resolutions/${t.conflict}.json`);
  assertEquals(resolution.status, "resolved");
  assertEquals(resolution.choice, chosen);
  assertEquals(resolution.revision_after, revisionAfter);
  assertEquals(resolution.intended_revision_after, revisionAfter);
  assert(!("error" in resolution) && !("failed_at" in resolution), "no failure fields remain");
  for (const id of t.losers) {
    const d = json(t.root, `decisions/${id}.json`);
    assertEquals(d.outcome, id === chosen ? "accepted" : "noop", `${id} finalized`);
    assertEquals(d.revision, revisionAfter);
    assertEquals(d.resolved_at, resolution.resolved_at);
  }
  const state = json(t.root, "state.json");
  assertEquals(state.head_revision, revisionAfter);
  const view = Deno.readTextFileSync(join(t.root, "bimri.md"));
  assertEquals(
    view,
    Deno.readTextFileSync(
      join(t.root, ".bimri", "revisions", `V${String(revisionAfter).padStart(6, "0")}.md`),
    ),
  );
  // The chosen generation replaced the live one exactly once.
  const replaced = archiveText(t.root).split("\n").filter((l) =>
    l.includes(`[BY:${chosen}] [replaced]`)
  );
  assertEquals(replaced.length, 1, "one replaced row for the chosen candidate");
}

Deno.test("crash after the applying record: same-key intents are held, another choice is refused, the same choice completes", async () => {
  const t = await fresh();
  try {
    const crash = await bimri(t.root, resolveArgs(t, t.losers[1]), {
      env: { BIMRI_FAULT: "resolve-applying-written" },
    });
    assertEquals(crash.code, 86);
    const applying = json(t.root, `resolutions/${t.conflict}.json`);
    assertEquals(applying.status, "applying");
    assertEquals(applying.authority, "human-asserted");
    assertEquals(applying.intended_revision_after, t.head + 1);
    assertEquals(json(t.root, "state.json").head_revision, t.head);

    // A later intent on the key waits for the owner's answer.
    const p = ok(
      await bimri(t.root, [
        "propose",
        "--run",
        t.spare,
        "--key",
        "task.alpha",
        "--text",
        "Sneaky.",
      ]),
      "spare propose",
    ).stdout.trim();
    const sync = ok(await bimri(t.root, ["sync", "--run", t.spare]), "spare sync");
    assertMatch(sync.stdout, /held candidates 1\b/);
    const held = json(t.root, `decisions/${p}.json`);
    assertEquals(held.outcome, "held");
    assertEquals(held.reason, "owner-resolution-in-progress");

    const other = await bimri(t.root, resolveArgs(t, "current"));
    assertEquals(other.code, 2);
    assertMatch(
      other.stderr,
      new RegExp(`already applying choice ${t.losers[1]}; retry that choice`),
    );

    const retry = ok(await bimri(t.root, resolveArgs(t, t.losers[1])), "retry");
    assertEquals(retry.stdout, `BIMRI: ${t.conflict} resolved with ${t.losers[1]}.\n`);
    assertResolvedWith(t, t.losers[1], t.head + 1);
    assertEquals(json(t.root, `resolutions/${t.conflict}.json`).started_at, applying.started_at);
  } finally {
    await Deno.remove(t.root, { recursive: true });
  }
});

Deno.test("crash after the applying record, then a start: same-key intents are still held on the everyday fast path", async () => {
  const t = await fresh();
  try {
    const crash = await bimri(t.root, resolveArgs(t, t.losers[1]), {
      env: { BIMRI_FAULT: "resolve-applying-written" },
    });
    assertEquals(crash.code, 86);
    // start re-proves the store; propose and sync then trust the derived summary.
    await startRun(t.root, "later");
    const p = ok(
      await bimri(t.root, ["propose", "--run", t.spare, "--key", "task.alpha", "--text", "Later."]),
      "spare propose",
    ).stdout.trim();
    ok(await bimri(t.root, ["sync", "--run", t.spare]), "spare sync");
    assertEquals(json(t.root, `decisions/${p}.json`).reason, "owner-resolution-in-progress");
    ok(await bimri(t.root, resolveArgs(t, t.losers[1])), "retry");
    assertResolvedWith(t, t.losers[1], t.head + 1);
  } finally {
    await Deno.remove(t.root, { recursive: true });
  }
});

Deno.test("crash after the archive row or an orphan revision: the retry applies the effect exactly once", async () => {
  for (const point of ["after-archive", "after-revision"]) {
    const t = await fresh();
    try {
      const crash = await bimri(t.root, resolveArgs(t, t.losers[0]), {
        env: { BIMRI_FAULT: point },
      });
      assertEquals(crash.code, 86, point);
      assertEquals(json(t.root, "state.json").head_revision, t.head);
      assertEquals(json(t.root, `resolutions/${t.conflict}.json`).status, "applying");
      const orphan = point === "after-revision";
      ok(await bimri(t.root, resolveArgs(t, t.losers[0])), `retry after ${point}`);
      // An orphan revision number is never reused: the effect lands on the next one.
      assertResolvedWith(t, t.losers[0], t.head + (orphan ? 2 : 1));
      assertEquals(revisionCount(t.root), t.head + 1 + (orphan ? 2 : 1));
      // The skipped snapshot stays, byte for byte, and the audit names it (a warning).
      const audit = await bimri(t.root, ["doctor", "--read-only"]);
      assertEquals(audit.code, 0, audit.stdout);
      const orphanWarning = `unreferenced immutable revision V${
        String(t.head + 1).padStart(6, "0")
      }.md; it may be an interrupted snapshot or an unresolved applying commit.`;
      assertEquals(audit.stdout.includes(`  - ${orphanWarning}`), orphan, audit.stdout);
    } finally {
      await Deno.remove(t.root, { recursive: true });
    }
  }
});

Deno.test("crash after the head moved: the retry finalizes the proven effect without a second commit", async () => {
  for (const point of ["after-state", "after-view", "resolve-effect-committed"]) {
    const t = await fresh();
    try {
      const crash = await bimri(t.root, resolveArgs(t, t.losers[0]), {
        env: { BIMRI_FAULT: point },
      });
      assertEquals(crash.code, 86, point);
      assertEquals(json(t.root, "state.json").head_revision, t.head + 1);
      assertEquals(json(t.root, `resolutions/${t.conflict}.json`).status, "applying");
      for (const id of t.losers) {
        assertEquals(json(t.root, `decisions/${id}.json`).outcome, "contested");
      }
      ok(await bimri(t.root, resolveArgs(t, t.losers[0])), `retry after ${point}`);
      assertResolvedWith(t, t.losers[0], t.head + 1);
      assertEquals(revisionCount(t.root), t.head + 2, "no second revision");
    } finally {
      await Deno.remove(t.root, { recursive: true });
    }
  }
});

/** Resolves with the first candidate and dies right after its effect is committed. */
async function crashAfterTheEffect(t: Template): Promise<void> {
  const crash = await bimri(t.root, resolveArgs(t, t.losers[0]), {
    env: { BIMRI_FAULT: "resolve-effect-committed" },
  });
  assertEquals(crash.code, 86);
}

/** The first candidate's answer is resolved at the revision its commit made; decisions final. */
function assertAnswerFinished(t: Template): void {
  const resolution = json(t.root, `resolutions/${t.conflict}.json`);
  assertEquals([resolution.status, resolution.revision_after], ["resolved", t.head + 1]);
  assertEquals(json(t.root, `decisions/${t.losers[0]}.json`).outcome, "accepted");
  assertEquals(json(t.root, `decisions/${t.losers[1]}.json`).outcome, "noop");
}

Deno.test("crash after the head moved: the next start finalizes the proven answer and records it in the summary", async () => {
  const t = await fresh();
  try {
    await crashAfterTheEffect(t);
    assertEquals(json(t.root, `resolutions/${t.conflict}.json`).status, "applying");
    // start proves the store healthy, then finishes the committed answer.
    await startRun(t.root, "later");
    assertAnswerFinished(t);
    const summaryPath = join(t.root, ".bimri", "audit-integrity-summary.json");
    assertEquals(JSON.parse(Deno.readTextFileSync(summaryPath)).applying, []);
    // The summary vouches for the start's own records: the next sync takes the fast path.
    ok(await bimri(t.root, newSubject(t.spare, "task.other", "Other.")), "spare propose");
    assertMatch(ok(await bimri(t.root, ["sync", "--run", t.spare]), "sync").stdout, /applied 1/);
    assertEquals(revisionCount(t.root), t.head + 3, "no second commit of the answer");
    assertEquals((await bimri(t.root, ["doctor", "--read-only"])).code, 0);
  } finally {
    await Deno.remove(t.root, { recursive: true });
  }
});

Deno.test("crash after the head moved: the next sync with pending work finalizes the answer", async () => {
  const t = await fresh();
  try {
    await crashAfterTheEffect(t);
    ok(await bimri(t.root, newSubject(t.spare, "task.other", "Other.")), "spare propose");
    const sync = ok(await bimri(t.root, ["sync", "--run", t.spare]), "spare sync");
    assertMatch(sync.stdout, /^BIMRI: synced /m);
    assertAnswerFinished(t);
    assertEquals((await bimri(t.root, ["doctor", "--read-only"])).code, 0);
  } finally {
    await Deno.remove(t.root, { recursive: true });
  }
});

Deno.test("an answer cut short is not finished by a start while authority is damaged", async () => {
  const t = await fresh();
  try {
    await crashAfterTheEffect(t);
    const path = join(t.root, ".bimri", "proposals", `${t.losers[1]}.json`);
    const good = Deno.readTextFileSync(path);
    Deno.writeTextFileSync(path, "{}\n");
    const damaged = ok(await bimri(t.root, ["start", "--actor", "blocked"]), "blocked start");
    assertMatch(damaged.stdout, /AUTHORITY RECOVERY NEEDED/);
    assertEquals(json(t.root, `resolutions/${t.conflict}.json`).status, "applying");
    assertEquals(json(t.root, `decisions/${t.losers[0]}.json`).outcome, "contested");
    Deno.writeTextFileSync(path, good);
    await startRun(t.root, "repaired");
    assertEquals(json(t.root, `resolutions/${t.conflict}.json`).status, "resolved");
    assertEquals(json(t.root, `decisions/${t.losers[0]}.json`).outcome, "accepted");
  } finally {
    await Deno.remove(t.root, { recursive: true });
  }
});

Deno.test("crash after the resolved record or mid-finalization: a repeat finalizes every decision", async () => {
  for (const point of ["resolve-resolved-written", "resolve-first-decision-finalized"]) {
    const t = await fresh();
    try {
      const crash = await bimri(t.root, resolveArgs(t, t.losers[1]), {
        env: { BIMRI_FAULT: point },
      });
      assertEquals(crash.code, 86, point);
      assertEquals(json(t.root, `resolutions/${t.conflict}.json`).status, "resolved");
      assertEquals(json(t.root, `decisions/${t.losers[1]}.json`).outcome, "contested");
      const again = ok(await bimri(t.root, resolveArgs(t, t.losers[1])), `repeat after ${point}`);
      assertEquals(again.stdout, `BIMRI: ${t.conflict} already resolved as ${t.losers[1]}.\n`);
      assertResolvedWith(t, t.losers[1], t.head + 1);
    } finally {
      await Deno.remove(t.root, { recursive: true });
    }
  }
});

Deno.test("crash while applying current: the retry resolves against the recorded head", async () => {
  const t = await fresh();
  try {
    const crash = await bimri(t.root, resolveArgs(t, "current"), {
      env: { BIMRI_FAULT: "resolve-applying-written" },
    });
    assertEquals(crash.code, 86);
    ok(await bimri(t.root, resolveArgs(t, "current")), "retry current");
    const resolution = json(t.root, `resolutions/${t.conflict}.json`);
    assertEquals(resolution.status, "resolved");
    assertEquals(resolution.revision_after, t.head);
    for (const id of t.losers) assertEquals(json(t.root, `decisions/${id}.json`).outcome, "noop");
    assertEquals(revisionCount(t.root), t.head + 1);
  } finally {
    await Deno.remove(t.root, { recursive: true });
  }
});

Deno.test("crash while applying current or dismiss, then a later value: the retry answers at the recorded revision and the later value stands", async () => {
  for (const choice of ["current", "dismiss"]) {
    const t = await fresh();
    try {
      const crash = await bimri(t.root, resolveArgs(t, choice), {
        env: { BIMRI_FAULT: "resolve-applying-written" },
      });
      assertEquals(crash.code, 86, choice);
      ok(
        await bimri(t.root, [
          "propose",
          "--run",
          t.spare,
          "--key",
          "task.alpha",
          "--text",
          "Later truth.",
        ]),
        "later propose",
      );
      assertMatch(ok(await bimri(t.root, ["sync", "--run", t.spare]), "later").stdout, /applied 1/);
      assertEquals(json(t.root, "state.json").head_revision, t.head + 1, choice);
      const retry = ok(await bimri(t.root, resolveArgs(t, choice)), `retry ${choice}`);
      assertEquals(retry.stdout, `BIMRI: ${t.conflict} resolved with ${choice}.\n`);
      const resolution = json(t.root, `resolutions/${t.conflict}.json`);
      assertEquals([resolution.status, resolution.revision_after], ["resolved", t.head], choice);
      for (const id of t.losers) {
        const d = json(t.root, `decisions/${id}.json`);
        assertEquals([d.outcome, d.revision], ["noop", t.head], `${choice} ${id}`);
      }
      assertEquals(json(t.root, "state.json").head_revision, t.head + 1, "no new revision");
      assertMatch(Deno.readTextFileSync(join(t.root, "bimri.md")), /Later truth\./);
      assertMatch(ok(await bimri(t.root, ["status"]), "status").stdout, /Open conflicts: 0\b/);
      assertEquals((await bimri(t.root, ["doctor", "--read-only"])).code, 0, choice);
    } finally {
      await Deno.remove(t.root, { recursive: true });
    }
  }
});

Deno.test("a choice whose effect cannot be committed is recorded failed, pauses writes, and completes when retried", async () => {
  const t = await fresh();
  try {
    const statePath = join(t.root, ".bimri", "state.json");
    const original = Deno.readTextFileSync(statePath);
    // Out of band, shrink the byte ceiling so that no cooling can make room.
    Deno.writeTextFileSync(
      statePath,
      original.replace(/"hot_max_bytes": \d+/, '"hot_max_bytes": 64'),
    );
    const failed = await bimri(t.root, resolveArgs(t, t.losers[0]));
    assertEquals(failed.code, 2);
    assertMatch(failed.stderr, /^BIMRI ERROR: /m);
    const record = json(t.root, `resolutions/${t.conflict}.json`);
    assertEquals(record.status, "failed");
    assert(typeof record.error === "string" && record.error.length > 0, "error recorded");
    assert(typeof record.failed_at === "string", "failed_at recorded");
    assertEquals(json(t.root, "state.json").head_revision, t.head);
    for (const id of t.losers) {
      assertEquals(json(t.root, `decisions/${id}.json`).outcome, "contested");
    }

    // Shared writes pause until the owner retries; the brief says so.
    const blocked = await bimri(t.root, ["sync", "--run", t.spare]);
    assertEquals(blocked.code, 2);
    assertMatch(blocked.stderr, /AUTHORITY RECOVERY NEEDED/);
    const brief = ok(await bimri(t.root, ["start", "--actor", "reader"]), "start");
    assertMatch(brief.stdout, new RegExp(`resolution ${t.conflict}.*failed`));

    Deno.writeTextFileSync(statePath, original);
    ok(await bimri(t.root, resolveArgs(t, t.losers[0])), "retry");
    assertResolvedWith(t, t.losers[0], t.head + 1);
    assertEquals(json(t.root, `resolutions/${t.conflict}.json`).started_at, record.started_at);
  } finally {
    await Deno.remove(t.root, { recursive: true });
  }
});

Deno.test("cleanup of the shared template store", async () => {
  if (template) await Deno.remove(template.root, { recursive: true });
  template = null;
});
