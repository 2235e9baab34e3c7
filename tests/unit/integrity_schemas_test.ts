/** Intrinsic record validation against the reference's v5.0.2 fixture and v5.1.0 shapes. */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, assertEquals } from "../helpers/assert.ts";
import {
  AUTHORITY_KINDS,
  KIND_FOLDER,
  recordProblems,
  resolutionProblems,
  stubProblems,
} from "../../engine/integrity/schemas.ts";

const FIXTURE = fileURLToPath(
  new URL("../fixtures/reference-v5.0.2-populated/.bimri", import.meta.url),
);

Deno.test({
  name: "every record of the reference v5.0.2 fixture is intrinsically valid",
  fn() {
    let count = 0;
    for (const kind of AUTHORITY_KINDS) {
      const folder = join(FIXTURE, KIND_FOLDER[kind]);
      for (const entry of Deno.readDirSync(folder)) {
        const id = entry.name.replace(/\.json$/, "");
        const value = JSON.parse(Deno.readTextFileSync(join(folder, entry.name)));
        assertEquals(recordProblems(kind, value, id), [], `${kind} ${id}`);
        count++;
      }
    }
    assert(count >= 20, `only ${count} fixture records`);
  },
});

const RESOLUTION = {
  authority: "human-asserted",
  bimri_version: "5.1.0",
  by: "user",
  choice: "R000003-Q001",
  conflict_id: "C000001",
  intended_revision_after: 9,
  proposal_ids: ["R000003-Q001"],
  resolved_at: "2026-12-02T12:58:54Z",
  revision_after: 9,
  revision_before: 8,
  started_at: "2026-12-02T12:58:54Z",
  status: "resolved",
};

Deno.test("resolution authority: required from v5.0.2 on, optional for v5.0/v5.0.1", () => {
  assertEquals(resolutionProblems(RESOLUTION, "C000001"), []);
  const { authority: _dropped, ...withoutAuthority } = RESOLUTION;
  assert(resolutionProblems(withoutAuthority, "C000001").length > 0);
  assert(resolutionProblems({ ...withoutAuthority, bimri_version: "5.0.2" }, "C000001").length > 0);
  assertEquals(resolutionProblems({ ...withoutAuthority, bimri_version: "5.0.1" }, "C000001"), []);
  const { status: _status, ...noStatus } = RESOLUTION;
  assert(resolutionProblems(noStatus, "C000001").length > 0, "a missing status is not resolved");
  assert(resolutionProblems({ ...RESOLUTION, choice: "R000009-Q001" }, "C000001").length > 0);
  assert(resolutionProblems(RESOLUTION, "C000002").length > 0, "ID must match the file name");
});

Deno.test("quarantine stubs are recognized only with their exact fields", () => {
  const sha = "e6fc8cdbbae472bc2d3576587f7b0e96e323d4db965c01af6505a611fe05ed42";
  const stub = {
    authority: "human-asserted",
    bimri_version: "5.1.0",
    original_path: ".bimri/decisions/R000001-Q002.json",
    original_type: "file",
    quarantine_schema: 1,
    quarantined_at: "2026-12-02T13:01:31Z",
    record_id: "R000001-Q002",
    record_kind: "decision",
    record_type: "authority-quarantine",
    recovery_file: `.bimri/recovery/authority-decision-R000001-Q002-${sha}.json`,
    sha256: sha,
    status: "quarantined",
  };
  assertEquals(stubProblems(stub, "decision", "R000001-Q002"), []);
  assert(stubProblems(stub, "decision", "R000001-Q003").length > 0);
  assert(stubProblems({ ...stub, sha256: "0".repeat(64) }, "decision", "R000001-Q002").length > 0);
  assert(stubProblems({ ...stub, extra: 1 }, "decision", "R000001-Q002").length > 0);
});
