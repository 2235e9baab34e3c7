/** One folder is one replica however its path is spelled (engine/share/place.ts). */
import { join } from "node:path";
import { ok, strictEqual } from "node:assert/strict";
import { placeKey, samePlace } from "../../engine/share/place.ts";

Deno.test("Windows spellings of one folder compare equal: drive-letter case, separators, long-path and UNC prefixes, trailing separator", () => {
  const key = placeKey("C:\\Work\\Proj", "windows");
  strictEqual(placeKey("c:\\work\\proj", "windows"), key);
  strictEqual(placeKey("C:/Work/Proj/", "windows"), key);
  strictEqual(placeKey("\\\\?\\C:\\Work\\Proj", "windows"), key);
  strictEqual(
    placeKey("\\\\?\\UNC\\server\\share\\Proj", "windows"),
    placeKey("\\\\Server\\Share\\proj", "windows"),
  );
  ok(placeKey("C:\\Work\\Proj2", "windows") !== key);
  ok(samePlace("C:\\Work\\Proj", "c:/work/proj", "windows"));
});

Deno.test("macOS folds case and Unicode form; Linux keeps case", () => {
  strictEqual(
    placeKey("/Users/Me/Caf\u00e9", "darwin"),
    placeKey("/users/me/cafe\u0301", "darwin"),
  );
  ok(samePlace("/Users/Me/Proj", "/users/me/proj/", "darwin"));
  ok(!samePlace("/home/me/Proj", "/home/me/proj", "linux"));
  strictEqual(placeKey("/home/me/proj/", "linux"), "/home/me/proj");
});

Deno.test({
  name: "a symbolic link to the folder is the same place; a copy or a moved folder is not",
  // Creating a symbolic link needs a privilege Windows does not grant by default.
  ignore: Deno.build.os === "windows",
  fn: () => {
    const base = Deno.makeTempDirSync({ prefix: "bimri-place-" });
    try {
      const real = join(base, "proj");
      Deno.mkdirSync(real);
      const link = join(base, "alias");
      Deno.symlinkSync(real, link, { type: "dir" });
      ok(samePlace(real, link, "linux"));
      ok(samePlace(link, join(base, ".", "proj"), "linux"));
      const copy = join(base, "copy");
      Deno.mkdirSync(copy);
      ok(!samePlace(real, copy, "linux"));
      ok(!samePlace(join(base, "gone"), real, "linux"));
    } finally {
      Deno.removeSync(base, { recursive: true });
    }
  },
});

Deno.test("a relative recorded place never matches: bimri records absolute paths", () => {
  ok(!samePlace(".", Deno.cwd(), Deno.build.os));
  ok(!samePlace("proj", "C:\\proj", "windows"));
  ok(samePlace("\\\\server\\share\\proj", "\\\\server\\share\\proj", "windows"));
});
