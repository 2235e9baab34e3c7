/** Which waiting records a pull may import now: causal order, and past a gap only keys that do not depend on it. */
import { parseEventId } from "./ids.ts";
import type { ShareRecord } from "./record.ts";
import { seenVector } from "./state.ts";
import type { ShareContext } from "./context.ts";
import { causallyReady, type Vector } from "./vector.ts";

/**
 * Which waiting records may be imported now. In causal order when nothing is
 * missing; past a gap (a record git has not brought yet), a record still
 * imports when its key does not depend on what is missing: the key's
 * previous shared event it replaced is known here, and no earlier record of
 * the key waits. The cursor (`vector`) stays contiguous; records imported
 * past it are listed in `ahead` until the gap fills.
 */
export class ImportOrder {
  readonly processed: Vector;
  readonly own: Set<string>;

  constructor(readonly ctx: ShareContext) {
    this.processed = seenVector(ctx.state);
    this.own = new Set([ctx.state.replica, ...ctx.state.retired]);
  }

  known(event: string): boolean {
    const { replica, seq } = parseEventId(event);
    if (this.own.has(replica)) return true;
    return (this.processed[replica] ?? 0) >= seq ||
      (this.ctx.state.ahead[replica] ?? []).includes(seq);
  }

  /**
   * True when `record` comes right after what is processed of its replica,
   * counting the seqs its author says (signed, `passed`) hold no record of it.
   */
  contiguous(record: ShareRecord): boolean {
    return record.seq - (record.passed ?? 0) <= (this.processed[record.replica] ?? 0) + 1;
  }

  ready(record: ShareRecord, held: Set<string>): boolean {
    const contiguous = this.contiguous(record);
    if (contiguous && causallyReady(record.vector, record.replica, this.processed)) return true;
    // One that passed over seqs waits to be contiguous: the cursor then steps
    // over them at once, and `ahead` never has to list a range it names.
    if (record.kind === "resolution" || record.passed !== undefined || held.has(record.key)) {
      return false;
    }
    return (record.replaces === null || this.known(record.replaces)) &&
      record.resolves.every((e) => this.known(e));
  }

  markDone(replica: string, seq: number, passed = 0): void {
    const s = this.ctx.state;
    const ahead = s.ahead[replica] ?? [];
    // `passed`: the seqs right before `seq` its author passed over (no record there).
    if (seq - passed <= (this.processed[replica] ?? 0) + 1) {
      let next = seq;
      while (ahead.includes(next + 1)) next++;
      this.processed[replica] = next;
      s.vector[replica] = next;
      const rest = ahead.filter((n) => n > next);
      if (rest.length > 0) s.ahead[replica] = rest;
      else delete s.ahead[replica];
    } else if (!ahead.includes(seq)) {
      s.ahead[replica] = [...ahead, seq].sort((a, b) => a - b);
    }
  }
}
