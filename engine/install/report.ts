/** Installer inputs and outputs: the options, the route each v5 format takes, the report and its printed lines. */
import {
  AUTHORITY_FORMAT,
  BIMRI_RELEASE,
  ENGINE_COMPAT_RELEASE,
  HOT_GRAMMAR,
  VERSIONS_EXPLAINED,
} from "../versions.ts";
import { commandLineFor } from "./shell_quote.ts";
import type { RuntimePrefix } from "./runtime.ts";
import { ADAPTER_FILES } from "./project_files.ts";

/** v5 state versions whose stores require `--quiescent`. */
export const V5_FORMATS = ["5.0", "5.0.1", "5.0.2", "5.1.0"];

/** v5 state versions the fresh route upgrades (5.0.2 and 5.1.0 take the code-only update). */
export const UPGRADED_V5_FORMATS = ["5.0", "5.0.1"];

/** Installer inputs. */
export type InstallOptions = {
  /** Project folder (absolute or relative to the working directory). */
  target: string;
  /** The caller attests that no old engine process can still write. */
  quiescent: boolean;
  /** Runtime prefix to record (defaults to the one running this process). */
  prefix?: RuntimePrefix;
};

/** Outcome of the hook smoke test. */
export type HookSmoke = {
  status: "passed" | "no-op-verified";
  detail: string;
  /** The run the smoke test opened and closed in its throwaway store copy (never the project's). */
  run: string | null;
};

/** What the installer did (the `--json` document; stable snake_case). */
export type InstallReport = {
  route: "fresh" | "migrated" | "code-only-update";
  target: string;
  bimri_release: string;
  compatible_engine: string;
  memory_format: string;
  hot_grammar: string;
  argv_prefix: string[];
  runtime: string;
  detected_format: string;
  memory: string[];
  adapters: string[];
  portable_files: string[];
  hook_smoke: HookSmoke;
  audit: { passed: boolean; errors: string[]; warnings: string[] };
  backup: string;
  receipt: string;
  lines: string[];
};

/** The prefix as one command line for the shell of `os` (the running OS unless a test says). */
export function printablePrefix(argv: readonly string[], os: string = Deno.build.os): string {
  return commandLineFor(argv, os);
}

/** What one route did, for installReport. */
export type RouteOutcome = {
  route: InstallReport["route"];
  target: string;
  prefix: RuntimePrefix;
  format: string;
  memory: string[];
  portable: string[];
  smoke: HookSmoke;
  audit: InstallReport["audit"];
  /** The backup or receipt folder, relative to the target. */
  backupRel: string;
};

/** The report of a finished route (its lines are rendered afterwards by renderInstallLines). */
export function installReport(outcome: RouteOutcome): InstallReport {
  return {
    route: outcome.route,
    target: outcome.target,
    bimri_release: BIMRI_RELEASE,
    compatible_engine: ENGINE_COMPAT_RELEASE,
    memory_format: AUTHORITY_FORMAT,
    hot_grammar: HOT_GRAMMAR,
    argv_prefix: [...outcome.prefix.argv],
    runtime: outcome.prefix.kind,
    detected_format: outcome.format,
    memory: outcome.memory,
    adapters: [...ADAPTER_FILES],
    portable_files: outcome.portable,
    hook_smoke: outcome.smoke,
    audit: outcome.audit,
    backup: outcome.backupRel,
    receipt: `${outcome.backupRel}/install-manifest.json`,
    lines: [],
  };
}

/** The lines a person sees after a successful install. */
export function renderInstallLines(report: InstallReport): string[] {
  const lines = [
    // The reference's headline first (scripts look for "BIMRI <engine> installed."), then bimri's own release.
    `BIMRI ${report.compatible_engine} installed.`,
    `bimri ${report.bimri_release} installed into ${report.target} (compatible engine ${report.compatible_engine}, memory format ${report.memory_format}, hot grammar ${report.hot_grammar}).`,
    VERSIONS_EXPLAINED,
    `Verified runtime (${report.runtime}): ${printablePrefix(report.argv_prefix)}`,
    ...report.memory,
    `Adapters: marked BIMRI block merged into ${
      report.adapters.join(" and ")
    }; portable files written: ${report.portable_files.join(", ")}.`,
    "Host-only runtime binding written to .bimri/runtime.local.json; Claude Code hooks rendered to .bimri/hooks.claude.local.json (.claude settings unchanged).",
    "Never commit either .local.json file or copy its absolute paths into shared instructions; rerun install after moving this folder to another machine.",
    report.hook_smoke.status === "passed"
      ? `Hook smoke test: PASSED (${report.hook_smoke.detail}).`
      : `Hook smoke test: rendered hook verified (${report.hook_smoke.detail}).`,
  ];
  const codeOnly = report.route === "code-only-update";
  if (report.audit.passed) lines.push(codeOnly ? "Read-only doctor passed." : "Doctor passed.");
  else {
    lines.push(codeOnly ? "READ-ONLY AUDIT: RECOVERY REQUIRED" : "DOCTOR: RECOVERY REQUIRED");
    for (const error of report.audit.errors) lines.push(`  - ${error}`);
    // The install is complete and exits 0; the damage it found is the
    // owner's to repair, with tools this install has just put in place.
    lines.push(
      "AUTHORITY RECOVERY NEEDED — shared-memory writes stay paused until the records above are repaired; the install itself is complete.",
      "The repair tools remain installed: run `doctor` for the full audit; with the owner's explicit approval, use `quarantine-authority` to preserve a damaged record and `restore-authority` to put back a validated replacement.",
    );
  }
  lines.push(
    codeOnly ? `Receipt: ${report.receipt}` : `Backups of touched files: ${report.backup}`,
  );
  for (const warning of report.audit.warnings) {
    const line = `Repair warning: ${warning}`;
    if (!lines.includes(line)) lines.push(line); // the migration receipt may already list it
  }
  return lines;
}
