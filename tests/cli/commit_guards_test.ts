/**
 * Guards of propose and sync that protect authority: Tier 1 promotion needs
 * the owner, an intent staged before an owner's answer waits for it, a stale
 * update after another run's close is the owner's question, a close cut short
 * after its state write is finished by the retry, a contested touch cannot be
 * chosen once another run touched the line, and subject admission rules.
 */
import { join } from "node:path";
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import {
  bimri,
  expectOk as ok,
  newSubject,
  readStoreJson as json,
  startRun,
  tempStore,
} from "../helpers/cli.ts";

async function seeded(key: string, text: string): Promise<string> {
  const root = await tempStore("bimri-guards-");
  const seed = await startRun(root, "seed");
  ok(await bimri(root, newSubject(seed, key, text)), "seed");
  ok(await bimri(root, ["close", "--run", seed, "--outcome", "success"]), "seed close");
  return root;
}

function propose(root: string, run: string, args: string[]) {
  return bimri(root, ["propose", "--run", run, ...args]);
}

Deno.test("an agent cannot promote an existing Tier 2 subject to Tier 1 without the owner", async () => {
  const root = await seeded("guard.promote", "Tier two value.");
  try {
    const agent = await startRun(root, "agent");
    const id = ok(
      await propose(root, agent, [
        "--tier",
        "1",
        "--kind",
        "fact",
        "--key",
        "guard.promote",
        "--text",
        "Promoted.",
      ]),
      "propose",
    ).stdout.trim();
    assertMatch(
      ok(await bimri(root, ["sync", "--run", agent]), "sync").stdout,
      /held candidates 1/,
    );
    const decision = json(root, `decisions/${id}.json`);
    assertEquals([decision.outcome, decision.reason], ["held", "tier1-human-authority-required"]);
    assertMatch(Deno.readTextFileSync(join(root, "bimri.md")), /Tier two value\./);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("--new-subject on an existing key is refused, and a contested proposal still holds its key", async () => {
  const root = await seeded("guard.subject", "Original.");
  try {
    const [a, b] = [await startRun(root, "a"), await startRun(root, "b")];
    const again = await bimri(root, newSubject(a, "guard.subject", "Again."));
    assertEquals(again.code, 2);
    assertMatch(again.stderr, /guard\.subject already exists; omit --new-subject to update it\./);
    ok(await propose(root, a, ["--key", "guard.subject", "--text", "From a."]), "a");
    const contested = ok(
      await propose(root, b, ["--key", "guard.subject", "--text", "From b."]),
      "b",
    )
      .stdout.trim();
    ok(await bimri(root, ["sync", "--run", a]), "sync a");
    ok(await bimri(root, ["sync", "--run", b]), "sync b");
    assertEquals(json(root, `decisions/${contested}.json`).outcome, "contested");
    const second = await propose(root, b, ["--key", "guard.subject", "--text", "Other."]);
    assertEquals(second.code, 2);
    assertMatch(second.stderr, new RegExp(`${contested} is already pending for guard\\.subject`));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a change staged before an owner's answer started applying waits for that answer", async () => {
  const root = await seeded("guard.answer", "Original.");
  try {
    const [a, b, s] = [
      await startRun(root, "a"),
      await startRun(root, "b"),
      await startRun(root, "s"),
    ];
    ok(await propose(root, a, ["--key", "guard.answer", "--text", "From a."]), "a");
    const candidate = ok(
      await propose(root, b, ["--key", "guard.answer", "--text", "From b."]),
      "b",
    ).stdout.trim();
    // Staged while nothing is applying: the hold must come from sync itself.
    const staged = ok(
      await propose(root, s, ["--key", "guard.answer", "--text", "Staged early."]),
      "s",
    ).stdout.trim();
    ok(await bimri(root, ["sync", "--run", a]), "sync a");
    ok(await bimri(root, ["sync", "--run", b]), "sync b");
    const conflict = json(root, `decisions/${candidate}.json`).conflict_id as string;
    const crash = await bimri(root, [
      "resolve",
      conflict,
      "--choose",
      candidate,
      "--human-approved",
    ], {
      env: { BIMRI_FAULT: "resolve-applying-written" },
    });
    assertEquals(crash.code, 86);
    assertMatch(ok(await bimri(root, ["sync", "--run", s]), "sync s").stdout, /held candidates 1/);
    const held = json(root, `decisions/${staged}.json`);
    assertEquals([held.outcome, held.reason], ["held", "owner-resolution-in-progress"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a stale update after another run closed the key is the owner's question", async () => {
  const root = await seeded("guard.closed", "Original.");
  try {
    const [closer, late] = [await startRun(root, "closer"), await startRun(root, "late")];
    ok(await propose(root, closer, ["--operation", "close", "--key", "guard.closed"]), "close");
    // Staged against the value the close then removes.
    const stale = ok(
      await propose(root, late, ["--key", "guard.closed", "--text", "Updated late."]),
      "late",
    ).stdout.trim();
    ok(await bimri(root, ["sync", "--run", closer]), "sync closer");
    const sync = ok(await bimri(root, ["sync", "--run", late]), "sync late");
    assertMatch(sync.stdout, /new concurrent conflicts 1/);
    const decision = json(root, `decisions/${stale}.json`);
    assertEquals(decision.outcome, "contested");
    const conflict = json(root, `conflicts/${decision.conflict_id}.json`);
    assertEquals([conflict.key, conflict.current_line], ["guard.closed", null]);
    assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a close cut short after its state write is finished by the retry", async () => {
  const root = await seeded("guard.cut", "Original.");
  try {
    const run = await startRun(root, "closer");
    const id = ok(await propose(root, run, ["--operation", "close", "--key", "guard.cut"]), "close")
      .stdout.trim();
    const cut = await bimri(root, ["sync", "--run", run], { env: { BIMRI_FAULT: "after-state" } });
    assertEquals(cut.code, 86);
    ok(await bimri(root, ["sync", "--run", run]), "retry");
    const decision = json(root, `decisions/${id}.json`);
    assertEquals(decision.outcome, "accepted");
    const archive = [...Deno.readDirSync(join(root, ".bimri", "archive"))]
      .map((e) => Deno.readTextFileSync(join(root, ".bimri", "archive", e.name))).join("");
    assertEquals(archive.split("\n").filter((l) => l.includes(`[BY:${id}] [closed]`)).length, 1);
    assertEquals((await bimri(root, ["doctor", "--read-only"])).code, 0);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a contested touch cannot be chosen after another run touched the live line", async () => {
  const root = await seeded("guard.touch", "Original.");
  try {
    const [a, b] = [await startRun(root, "a"), await startRun(root, "b")];
    ok(await propose(root, a, ["--key", "guard.touch", "--text", "From a."]), "a");
    const touch = ok(await propose(root, b, ["--operation", "touch", "--key", "guard.touch"]), "b")
      .stdout.trim();
    ok(await bimri(root, ["sync", "--run", a]), "sync a");
    ok(await bimri(root, ["sync", "--run", b]), "sync b");
    const conflict = json(root, `decisions/${touch}.json`).conflict_id as string;
    const c = await startRun(root, "c");
    ok(await propose(root, c, ["--operation", "touch", "--key", "guard.touch"]), "c");
    ok(await bimri(root, ["sync", "--run", c]), "sync c");
    const r = await bimri(root, ["resolve", conflict, "--choose", touch, "--human-approved"]);
    assertEquals(r.code, 2, r.stdout);
    assertMatch(r.stderr, /memory changed after this question was raised/);
    assertEquals(json(root, `decisions/${touch}.json`).outcome, "contested");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
