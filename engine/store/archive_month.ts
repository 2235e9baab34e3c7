/**
 * Reading the append-only archive month files from disk (never through a
 * link, strict UTF-8): every month, every record, and the proof that each
 * cold-current record is bound to exactly one cooled row of its month.
 */
import { BimriError } from "../errors.ts";
import { type ArchiveRecord, parseArchiveRow, parseArchiveText } from "../model/archive_row.ts";
import type { ColdRecord } from "../model/state.ts";
import { decodeUtf8Strict } from "../model/text.ts";
import {
  linkRefusal,
  listNames,
  lstatOrNull,
  readBytesOrNull,
  readLinesContaining,
} from "./files.ts";
import type { StorePaths } from "./paths.ts";

const MONTH_FILE = /^[0-9]{4}-[0-9]{2}\.md$/;

function refuseLinkedMonth(path: string, name: string): void {
  if (lstatOrNull(path)?.isSymlink) {
    throw new BimriError(
      "store-unsafe",
      linkRefusal(
        path,
        `archive file ${name}`,
        "replace it with the regular file, then run doctor.",
      ),
    );
  }
}

function notUtf8(name: string): BimriError {
  return new BimriError("store-corrupt", `archive file ${name} is not valid UTF-8; run doctor.`);
}

function readMonthText(paths: StorePaths, name: string): string {
  const path = `${paths.folder("archive")}/${name}`;
  refuseLinkedMonth(path, name);
  const bytes = readBytesOrNull(path);
  if (bytes === null) return "";
  const text = decodeUtf8Strict(bytes);
  if (text === null) throw notUtf8(name);
  return text;
}

/** Every archive month file (name order) with its validated text and lstat. */
export function readArchiveMonths(
  paths: StorePaths,
): { name: string; text: string; info: Deno.FileInfo }[] {
  const months: { name: string; text: string; info: Deno.FileInfo }[] = [];
  for (const name of listNames(paths.folder("archive"))) {
    if (!name.endsWith(".md")) continue;
    const info = lstatOrNull(`${paths.folder("archive")}/${name}`);
    const text = readMonthText(paths, name);
    if (info !== null) months.push({ name, text, info });
  }
  return months;
}

/** Every archive record, month files in name order, rows in file order. */
export function readAllArchiveRecords(paths: StorePaths): ArchiveRecord[] {
  return readArchiveMonths(paths).flatMap(({ name, text }) =>
    parseArchiveText(text, `.bimri/archive/${name}`)
  );
}

function unboundCold(key: string, month: string): BimriError {
  return new BimriError(
    "store-corrupt",
    `cold-current subject ${key} is not bound to exactly one immutable cooled archive record in .bimri/archive/${month}; run doctor.`,
  );
}

/**
 * Proves one cold-current record against only its own archive month: exactly
 * one `cooled` row by `archived_by` with the identical raw line must exist.
 */
export function verifyColdBinding(paths: StorePaths, key: string, cold: ColdRecord): void {
  const name = `${cold.archived_on.slice(0, 7)}.md`;
  const broken = () => unboundCold(key, name);
  if (!MONTH_FILE.test(name)) throw broken();
  const path = `${paths.folder("archive")}/${name}`;
  refuseLinkedMonth(path, name);
  const lines = readLinesContaining(path, `[BY:${cold.archived_by}] `);
  if (lines === "invalid-utf8") throw notUtf8(name);
  const records = parseArchiveText((lines ?? []).join("\n"), `.bimri/archive/${name}`);
  const exact = records.filter((r) =>
    r.proposalId === cold.archived_by && r.reason === "cooled" && r.rawLine === cold.raw_line
  );
  if (exact.length !== 1) throw broken();
}

/**
 * Proves every cold-current record as `verifyColdBinding` proves one, reading
 * each archive month the records name once.
 */
export function verifyColdBindings(paths: StorePaths, cold: Record<string, ColdRecord>): void {
  const byMonth = new Map<string, [string, ColdRecord][]>();
  for (const [key, record] of Object.entries(cold)) {
    const name = `${record.archived_on.slice(0, 7)}.md`;
    byMonth.set(name, [...(byMonth.get(name) ?? []), [key, record]]);
  }
  for (const [name, records] of byMonth) {
    const broken = (key: string) => unboundCold(key, name);
    if (!MONTH_FILE.test(name)) throw broken(records[0][0]);
    const rows = new Map<string, number>();
    for (const row of parseArchiveText(readMonthText(paths, name), `.bimri/archive/${name}`)) {
      if (row.reason !== "cooled") continue;
      const id = `${row.proposalId} ${row.rawLine}`;
      rows.set(id, (rows.get(id) ?? 0) + 1);
    }
    for (const [key, record] of records) {
      if (rows.get(`${record.archived_by} ${record.raw_line}`) !== 1) throw broken(key);
    }
  }
}

/**
 * The raw lines proposal `proposalId` cooled (its `cooled` rows), from the
 * newest month that has any: where a change whose own line went cold at once
 * finds that line after later commits replaced it. Reads only the lines that
 * name the proposal, month by month from the newest.
 */
export function linesCooledBy(paths: StorePaths, proposalId: string): string[] {
  const months = listNames(paths.folder("archive")).filter((n) => MONTH_FILE.test(n)).sort()
    .reverse();
  for (const name of months) {
    const path = `${paths.folder("archive")}/${name}`;
    refuseLinkedMonth(path, name);
    const lines = readLinesContaining(path, `[BY:${proposalId}] [cooled] `);
    if (lines === "invalid-utf8") throw notUtf8(name);
    const cooled = (lines ?? []).flatMap((line) => {
      const row = parseArchiveRow(line);
      return row?.proposalId === proposalId && row.reason === "cooled" ? [row.rawLine] : [];
    });
    if (cooled.length > 0) return cooled;
  }
  return [];
}
