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

  ready(record: ShareRecord, held: Set<string>): boolean {
    const contiguous = record.seq === (this.processed[record.replica] ?? 0) + 1;
    if (contiguous && causallyReady(record.vector, record.replica, this.processed)) return true;
    if (record.kind === "resolution" || held.has(record.key)) return false;
    return (record.replaces === null || this.known(record.replaces)) &&
      record.resolves.every((e) => this.known(e));
  }

  markDone(replica: string, seq: number): void {
    const s = this.ctx.state;
    const ahead = s.ahead[replica] ?? [];
    if (seq === (this.processed[replica] ?? 0) + 1) {
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
