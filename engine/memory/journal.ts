/**
 * `journal`: one durable line of detail in a run's own log. It reads the
 * state and that log only, never the head revision or any history.
 */
import { cleanScalar } from "../model/ids.ts";
import { utcTimestamp } from "../model/time.ts";
import { saveState, type Store } from "../store/store.ts";
import { appendJournalLine, nextEntryId, readRunLog, scanRunLog } from "./run_log.ts";
import { parseImportance, requireActiveRun } from "./run_input.ts";
import type { TextScreen } from "../model/unsafe_text.ts";

/** Result of `journal`. */
export type JournalResult = { run: string; entry_id: string };

/**
 * The checked text and importance of a journal entry. The reference checks
 * them before it touches the folder, so callers run this before opening the
 * store: a refused entry never creates one.
 */
export function journalInput(
  textInput: string,
  importanceInput: string | undefined,
  screen: TextScreen,
): { text: string; importance: number } {
  const text = cleanScalar(textInput, "journal text", 8000);
  const importance = parseImportance(importanceInput);
  screen.refuseUnsafe(text, "journal text");
  return { text, importance };
}

/** Appends a journal entry to the run's log and returns its entry ID. */
export function journal(
  store: Store,
  runInput: string,
  textInput: string,
  importanceInput: string | undefined,
  screen: TextScreen,
): JournalResult {
  // The reference checks the text and importance before the run.
  const { text, importance } = journalInput(textInput, importanceInput, screen);
  const run = requireActiveRun(store.state, runInput);
  const facts = scanRunLog(run, readRunLog(store.paths, run));
  const id = nextEntryId(run, facts);
  appendJournalLine(store.paths, run, id, importance, text);
  store.state.active_runs[run].last_activity_at = utcTimestamp();
  saveState(store.paths, store.state);
  return { run, entry_id: id };
}
