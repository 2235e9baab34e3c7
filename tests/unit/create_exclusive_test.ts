/**
 * createExclusive never overwrites an immutable record: with hard links, and
 * on a file system without them (FAT, exFAT; simulated by BIMRI_FAULT, which a
 * separate process reads), an existing path keeps its bytes and the call says
 * false; a free path gets the bytes and true.
 */
import { assertEquals } from "../helpers/assert.ts";
import { createExclusive, createExclusiveMany } from "../../engine/store/files.ts";

const FILES_TS = new URL("../../engine/store/files.ts", import.meta.url).href;

Deno.test("with hard links: an existing record keeps its bytes", () => {
  const dir = Deno.makeTempDirSync({ prefix: "bimri-exclusive-" });
  try {
    Deno.writeTextFileSync(`${dir}/R.json`, "original\n");
    assertEquals(createExclusive(`${dir}/R.json`, "replacement\n"), false);
    assertEquals(Deno.readTextFileSync(`${dir}/R.json`), "original\n");
    assertEquals(createExclusive(`${dir}/S.json`, "fresh\n"), true);
    assertEquals(Deno.readTextFileSync(`${dir}/S.json`), "fresh\n");
    assertEquals([...Deno.readDirSync(dir)].map((e) => e.name).sort(), ["R.json", "S.json"]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("without hard links: an existing record keeps its bytes", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "bimri-exclusive-" });
  try {
    Deno.writeTextFileSync(`${dir}/R.json`, "original\n");
    const script = `import { createExclusive } from ${JSON.stringify(FILES_TS)};
const dir = ${JSON.stringify(dir)};
console.log(JSON.stringify([
  createExclusive(dir + "/R.json", "replacement\\n"),
  createExclusive(dir + "/S.json", "fresh\\n"),
]));`;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--quiet", script],
      env: { BIMRI_FAULT: "no-hard-links" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 0, stderr);
    assertEquals(JSON.parse(new TextDecoder().decode(out.stdout)), [false, true]);
    assertEquals(Deno.readTextFileSync(`${dir}/R.json`), "original\n");
    assertEquals(Deno.readTextFileSync(`${dir}/S.json`), "fresh\n");
    assertEquals([...Deno.readDirSync(dir)].map((e) => e.name).sort(), ["R.json", "S.json"]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("many at once: names taken in order, stopping at the first existing one", () => {
  const dir = Deno.makeTempDirSync({ prefix: "bimri-exclusive-" });
  try {
    Deno.writeTextFileSync(`${dir}/B.json`, "original\n");
    const records = ["A", "B", "C"].map((n) => ({ path: `${dir}/${n}.json`, data: `${n} new\n` }));
    assertEquals(createExclusiveMany(records), 1);
    assertEquals(Deno.readTextFileSync(`${dir}/A.json`), "A new\n");
    assertEquals(Deno.readTextFileSync(`${dir}/B.json`), "original\n");
    // Nothing after the taken name was created, and no temp file is left.
    assertEquals([...Deno.readDirSync(dir)].map((e) => e.name).sort(), ["A.json", "B.json"]);
    assertEquals(createExclusiveMany(records.slice(2)), -1);
    assertEquals(Deno.readTextFileSync(`${dir}/C.json`), "C new\n");
    assertEquals(createExclusiveMany([]), -1);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
