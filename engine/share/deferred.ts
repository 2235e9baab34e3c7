/**
 * The questions a pull raises after committing its effects together: their
 * events are saved in `.bimri/share-contesting.local.json` before the share
 * state's cursor moves past them, so a pull killed before raising them all
 * has the next command (`finishImport`) raise the rest, each once.
 */
import { join } from "../store/os_path.ts";
import { isJsonObject, type JsonValue } from "../model/json.ts";
import { decodeUtf8Strict } from "../model/text.ts";
import { canonicalJson } from "../store/canonical_json.ts";
import { atomicReplace, readBytesOrNull } from "../store/files.ts";
import { EVENT_ID } from "./ids.ts";
import type { ShareContext } from "./context.ts";

function file(ctx: ShareContext): string {
  return join(ctx.paths.dir, "share-contesting.local.json");
}

/** Saves the events whose questions are still to be raised (none: the file is emptied). */
export function saveContesting(ctx: ShareContext, events: string[]): void {
  if (events.length === 0 && readBytesOrNull(file(ctx)) === null) return;
  atomicReplace(file(ctx), canonicalJson({ events }));
}

/** The events whose questions a killed pull had still to raise. */
export function readContesting(ctx: ShareContext): string[] {
  const bytes = readBytesOrNull(file(ctx));
  if (bytes === null) return [];
  let raw: JsonValue = null;
  try {
    raw = JSON.parse(decodeUtf8Strict(bytes) ?? "") as JsonValue;
  } catch {
    return [];
  }
  if (!isJsonObject(raw) || !Array.isArray(raw.events)) return [];
  return raw.events.filter((e): e is string => typeof e === "string" && EVENT_ID.test(e));
}

/** True when a pull was left unfinished: records still to import, or questions still to raise. */
export function pullLeftUnfinished(ctx: ShareContext): boolean {
  return ctx.state.importing.length > 0 || readContesting(ctx).length > 0;
}
