// files.ts entryMayExist: one listing per folder while a command runs (rememberListings), forgotten by bimri's own writes.
import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  appendLine,
  atomicReplace,
  createExclusive,
  entryMayExist,
  rememberListings,
} from "../../engine/store/files.ts";

Deno.test("entryMayExist lists the folder anew on every call outside a command", () => {
  const dir = Deno.makeTempDirSync();
  try {
    strictEqual(entryMayExist(dir, ".bimri-secrets.json"), false);
    Deno.writeTextFileSync(join(dir, ".BIMRI-Secrets.json"), "{}");
    strictEqual(entryMayExist(dir, ".bimri-secrets.json"), true); // any case matches
    strictEqual(entryMayExist(join(dir, "missing"), "x"), true); // unlistable: may exist
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("while a command runs, a folder is listed once until bimri writes into it", () => {
  const dir = Deno.makeTempDirSync();
  rememberListings(true);
  try {
    strictEqual(entryMayExist(dir, "a.json"), false);
    // Another writer's file is not seen until the listing is forgotten:
    // the command asks the same question of the same listing.
    Deno.writeTextFileSync(join(dir, "a.json"), "{}");
    strictEqual(entryMayExist(dir, "a.json"), false);
    // A write of bimri's own into the folder forgets its listing.
    atomicReplace(join(dir, "b.json"), "{}");
    ok(entryMayExist(dir, "a.json"));
    ok(entryMayExist(dir, "b.json"));
    Deno.writeTextFileSync(join(dir, "c.json"), "{}");
    strictEqual(entryMayExist(dir, "c.json"), false);
    ok(createExclusive(join(dir, "d.json"), "{}"));
    ok(entryMayExist(dir, "c.json"));
    Deno.writeTextFileSync(join(dir, "e.json"), "{}");
    strictEqual(entryMayExist(dir, "e.json"), false);
    appendLine(join(dir, "f.log"), "line");
    ok(entryMayExist(dir, "e.json"));
    // A write elsewhere leaves the listing as it was.
    const other = join(dir, "sub");
    Deno.mkdirSync(other);
    strictEqual(entryMayExist(dir, "g.json"), false);
    Deno.writeTextFileSync(join(dir, "g.json"), "{}");
    atomicReplace(join(other, "h.json"), "{}");
    strictEqual(entryMayExist(dir, "g.json"), false);
  } finally {
    rememberListings(false);
  }
  try {
    // The command over, every call lists again.
    ok(entryMayExist(dir, "g.json"));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
