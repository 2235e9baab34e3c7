/**
 * Input the reference refuses before touching the folder is refused here
 * before the store is opened: in a folder without a store, nothing appears.
 */
import { assertEquals, assertMatch } from "../helpers/assert.ts";
import { bimri, tempStore } from "../helpers/cli.ts";

const REFUSED: string[][] = [
  ["close", "--outcome", "bogus"],
  ["close", "--run", "R000001", "--summary", "two\tcolumns"],
  ["recover-run", "--run", "R000001", "--summary", "Owner said so.", "--outcome", "bogus"],
  ["journal", "--run", "R000001", "--text", ""],
  ["journal", "--run", "R000001", "--text", "Fine.", "--importance", "9"],
  ["propose", "--run", "R000001", "--key", "Not A Key!", "--text", "T."],
];

Deno.test("refused close, recover-run, journal and propose input leaves an empty folder empty", async () => {
  for (const args of REFUSED) {
    const folder = await tempStore("bimri-no-store-");
    const result = await bimri(folder, args);
    assertEquals(result.code, 2, args.join(" "));
    assertMatch(result.stderr, /^BIMRI ERROR: /);
    assertEquals([...Deno.readDirSync(folder)].map((e) => e.name), [], args.join(" "));
  }
});
