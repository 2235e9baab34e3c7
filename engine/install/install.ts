/**
 * `install --target DIR`: put BIMRI memory into a project, by the route its
 * store's format calls for:
 *
 * - fresh folders and v1-v4 memory (fresh.ts): portable files, marked adapter blocks,
 *   memory initialization or migration, index, host-local bindings and a
 *   self-check, with every touched path backed up under
 *   `.bimri/install-backups/<stamp>/` and restored when the self-check fails;
 * - existing v5 stores (`--quiescent` required, checked first): a code-only
 *   update (code_only_update.ts) that leaves `bimri.md` and every record byte-identical, with a
 *   receipt under `.bimri-update-backups/<stamp>/`. Stores older than 5.1.0
 *   are brought to 5.1.0 by the migrator first.
 *
 * The runtime prefix is proven with a sentinel before the first target write.
 */
import { dirname, join, resolve } from "node:path";
import { BimriError } from "../errors.ts";
import { prepareAudit } from "../integrity/doctor.ts";
import { sameBytes } from "../migrate/common.ts";
import { detectStoreFormat } from "../migrate/mod.ts";
import { rejectUnclaimedLegacyRoots } from "../records/store_format.ts";
import { ensureV4Quiescent } from "../migrate/v4.ts";
import { utf8 } from "../model/text.ts";
import { lstatOrNull, readBytesOrNull } from "../store/files.ts";
import { StorePaths } from "../store/paths.ts";
import { AUTHORITY_FORMAT } from "../versions.ts";
import { currentRuntimePrefix, verifyRuntimePrefix } from "./runtime.ts";
import { template } from "./project_files.ts";
import {
  type InstallOptions,
  type InstallReport,
  renderInstallLines,
  UPGRADED_V5_FORMATS,
  V5_FORMATS,
} from "./report.ts";
import { freshInstall } from "./fresh.ts";
import { codeOnlyUpdate } from "./code_only_update.ts";

/**
 * A store only bimri can have written (issue 45): built by `share pull` in
 * this folder (its replica file names this path), never installed here (no
 * runtime binding), with no reference engine beside it (no bimri-engine.py,
 * or bimri's own launcher byte for byte). No older engine can be running on
 * it, so install adopts it without the `--quiescent` attestation.
 */
function builtByShareHere(target: string): boolean {
  const dir = join(target, ".bimri");
  if (lstatOrNull(join(dir, "runtime.local.json")) !== null) return false;
  const replica = readBytesOrNull(join(dir, "replica.local.json"));
  if (replica === null) return false;
  let storePath: unknown;
  try {
    storePath = JSON.parse(new TextDecoder().decode(replica)).store_path;
  } catch {
    return false;
  }
  if (storePath !== target) return false;
  const launcher = readBytesOrNull(join(target, "bimri-engine.py"));
  return launcher === null || sameBytes(launcher, utf8(template("bimri-engine.py")));
}

/** Installs bimri into `options.target` and returns the report (throws BimriError on refusal). */
export async function installProject(options: InstallOptions): Promise<InstallReport> {
  const target = resolve(options.target);
  if (dirname(target) === target) {
    throw new BimriError("refused", "refusing to install BIMRI into a filesystem root.");
  }
  // An existing store is audited before and after the update.
  await prepareAudit(new StorePaths(target));
  // Routing reads only; the quiescence attestation is checked before anything else happens.
  const detection = detectStoreFormat(target);
  // A store `share pull` built here needs no attestation.
  const adopted = detection.format === AUTHORITY_FORMAT && builtByShareHere(target);
  if (V5_FORMATS.includes(detection.format) && !options.quiescent && !adopted) {
    throw new BimriError(
      "refused",
      `updating an existing v${detection.format} store requires an externally verified quiescent handoff. Stop every process running an older engine in this folder, then retry install with --quiescent. The lock cannot enforce that old-process shutdown. Nothing was changed.`,
    );
  }
  // A live v4 writer takes no v5 lock: refuse before any backup is taken.
  if (detection.format === "v4") ensureV4Quiescent(target);
  // Structured state beside a distinct legacy memory file: the owner chooses
  // first, and a refusal before the snapshot leaves no backup folder behind.
  // (A 5.1.0 store may still hold the root files its own cut-short legacy
  // migration claims; the update finishes retiring those first.)
  if (["v4", "5.0", "5.0.1", "5.0.2"].includes(detection.format)) {
    rejectUnclaimedLegacyRoots(target);
  }
  const prefix = options.prefix ?? currentRuntimePrefix();
  let cwd = target;
  while (lstatOrNull(cwd) === null && dirname(cwd) !== cwd) cwd = dirname(cwd);
  await verifyRuntimePrefix(prefix, cwd);
  const report = V5_FORMATS.includes(detection.format) &&
      !UPGRADED_V5_FORMATS.includes(detection.format)
    ? await codeOnlyUpdate(target, detection.format, prefix, options.quiescent, adopted)
    : await freshInstall(target, detection.format, prefix, options.quiescent);
  report.lines = renderInstallLines(report);
  return report;
}
