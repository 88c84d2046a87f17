/**
 * Session windows (Proton's SessionHelper, streaming-sql-notes.md §1.5), decided row by row in
 * arrival order per substream. A session opens on a row satisfying the start condition (every row
 * when there is none), keeps rows while they arrive before its timeout (last event + idle) and
 * before its maximum length (start + max), and closes on the first row past either (its end is the
 * timeout or the maximum) or on a row satisfying the end condition. Only closed sessions are
 * emitted (or every session on EMIT ... TIMEOUT); rows older than the substream's watermark
 * (largest event time - delay) are late and dropped.
 */

/** What the executor reads per row to assign sessions. */
export interface SessionRow {
  readonly sn: number;
  /** Event time, epoch milliseconds. */
  readonly ts: number;
  /** The substream (PARTITION BY) key. */
  readonly key: string;
  readonly start: boolean;
  readonly end: boolean;
}

export interface SessionOptions {
  readonly idleMs: number;
  readonly maxLengthMs: number;
  readonly startInclusive: boolean;
  readonly endInclusive: boolean;
  readonly delayMs: number;
}

/** A session and the rows it holds; `end` is exclusive. */
export interface Session {
  readonly id: number;
  readonly key: string;
  start: number;
  end: number;
  timeoutTs: number;
  maxTs: number;
  active: boolean;
  readonly sns: number[];
  /** The substream's emit version when the session is emitted (set by the executor). */
  version?: number;
}

interface Substream {
  maxEventTs: number;
  session?: Session;
}

/** A tracker's state as a checkpoint keeps it (JSON). */
export interface SavedSessions {
  nextId: number;
  /** Per substream: key, largest event time (null: none yet), its open session. */
  substreams: Array<[string, number | null, Session | null]>;
  /** Ids of the open sessions touched since the last `touched()`. */
  changed: number[];
}

export class SessionTracker {
  private nextId = 1;
  private readonly substreams = new Map<string, Substream>();
  /** Sessions with rows added since the last call of `touched()`. */
  private readonly changed = new Set<Session>();

  constructor(private readonly o: SessionOptions) {}

  /** Assign rows (in sequence-number order); answers the sessions they closed. */
  process(rows: readonly SessionRow[]): Session[] {
    const closed: Session[] = [];
    for (const row of rows) {
      let sub = this.substreams.get(row.key);
      if (!sub) {
        sub = { maxEventTs: Number.NEGATIVE_INFINITY };
        this.substreams.set(row.key, sub);
      }
      if (row.ts > sub.maxEventTs) sub.maxEventTs = row.ts;
      if (row.ts < sub.maxEventTs - this.o.delayMs) continue; // late
      const s = sub.session;
      if (s?.active) {
        if (this.closeFor(s, row)) {
          closed.push(s);
          sub.session = undefined;
          if (row.start) sub.session = this.open(row);
        } else this.keep(s, row);
      } else if (row.start) {
        sub.session = this.open(row);
      }
    }
    return closed;
  }

  /** Everything the tracker knows, for a checkpoint. */
  save(): SavedSessions {
    return {
      nextId: this.nextId,
      substreams: [...this.substreams].map(([key, sub]) => [
        key,
        Number.isFinite(sub.maxEventTs) ? sub.maxEventTs : null,
        sub.session ? { ...sub.session, sns: [...sub.session.sns] } : null,
      ]),
      changed: [...this.changed].filter((s) => s.active).map((s) => s.id),
    };
  }

  /** Take back what `save` answered (replacing any state so far). */
  restore(saved: SavedSessions): void {
    this.nextId = saved.nextId;
    this.substreams.clear();
    this.changed.clear();
    const changed = new Set(saved.changed);
    for (const [key, max, session] of saved.substreams) {
      const sub: Substream = { maxEventTs: max ?? Number.NEGATIVE_INFINITY };
      if (session) {
        sub.session = { ...session, sns: [...session.sns] };
        if (changed.has(session.id)) this.changed.add(sub.session);
      }
      this.substreams.set(key, sub);
    }
  }

  /** Close every open session (EMIT ... TIMEOUT). */
  closeAll(): Session[] {
    const out: Session[] = [];
    for (const sub of this.substreams.values()) {
      if (sub.session?.active && sub.session.start !== 0) {
        sub.session.active = false;
        out.push(sub.session);
      }
      sub.session = undefined;
    }
    return out;
  }

  /** Open sessions that got rows since the last call (EMIT ON UPDATE). */
  touched(): Session[] {
    const out = [...this.changed].filter((s) => s.active && s.start !== 0);
    this.changed.clear();
    return out;
  }

  private open(row: SessionRow): Session {
    const s: Session = {
      id: this.nextId++,
      key: row.key,
      start: 0,
      end: 0,
      timeoutTs: row.ts + this.o.idleMs,
      maxTs: row.ts + this.o.maxLengthMs,
      active: true,
      sns: [],
    };
    if (this.o.startInclusive) this.keep(s, row);
    return s;
  }

  private keep(s: Session, row: SessionRow): void {
    if (s.start === 0) s.start = row.ts;
    if (row.ts >= s.end) {
      s.end = row.ts + 1;
      s.timeoutTs = row.ts + this.o.idleMs;
    }
    s.sns.push(row.sn);
    this.changed.add(s);
  }

  /** Does `row` close the session (oversize, timeout, end condition)? Sets the session's end. */
  private closeFor(s: Session, row: SessionRow): boolean {
    if (row.ts >= s.maxTs) {
      s.end = s.maxTs;
    } else if (row.ts >= s.timeoutTs) {
      s.end = s.timeoutTs;
    } else if (row.end) {
      if (this.o.endInclusive) this.keep(s, row);
      else if (row.ts > s.end) s.end = row.ts;
    } else {
      return false;
    }
    s.active = false;
    return true;
  }
}
