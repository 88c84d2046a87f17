import { SharedRuns } from './shared-runs.ts';
import { P } from './sql-template.ts';
import {
  DEFAULT_GROUP_PACING,
  DEFAULT_TAIL_PACING,
  type GroupPacingOptions,
  type TailPacingOptions,
} from './step-pacing.ts';

import type { StreamingProgram } from './streaming-program.ts';
import { VOLATILE } from './volatile-functions.ts';

/**
 * Shared reads of streaming steps (issue 12): several executions running the same tail SQL over
 * the same stream (materialized views, dashboard panels, many clients of one query) read each
 * committed range once.
 *
 * Two parts, both keyed by a *group*: one source stream and one tail template (the step SQL before
 * its range is filled in). Only executions whose step SQL is a pure function of the range join a
 * group (`sharedGroupKey`), so equal SQL text means equal rows.
 *
 * - `align`: the range a member steps over. A member at a position where another member chose a
 *   range lately takes that range (so their filled SQL is identical); a member behind catches up
 *   in one step to the newest range the others chose and steps with them from there. A member
 *   alone keeps its range.
 * - `read`: one engine call per distinct SQL text; members asking for the same text while it runs
 *   or shortly after share its result. A result is dropped once every member took it, or after
 *   `ttlMs`, or when the kept results pass `maxBytes` (oldest first). A miss only costs a read:
 *   correctness never depends on what is kept.
 *
 * A durable execution journals the aligned range before it reads, and replays the journaled range
 * (its SQL may then miss and read alone), so alignment never changes what a replay reads.
 */
export class SharedStepReads {
  /** Identical queries run once (shared-runs.ts): the other half of sharing work between executions. */
  readonly runs = new SharedRuns();
  /** How live tails coalesce commits (step-pacing.ts); a bench or test may change it. */
  pacing: TailPacingOptions;
  /**
   * Durable members (views) of a group of several cut a new range at most every
   * `min(maxGapMs, costRatio x the group's mean step time)` (`dueAt`); 0 turns it off.
   */
  groupPacing: GroupPacingOptions;
  private readonly groups = new Map<string, Group>();
  private readonly results = new Map<string, Kept>();
  private keptBytes = 0;
  /** Reads answered from another member's read (metrics, tests). */
  hits = 0;
  /** Engine reads made by grouped members. */
  reads = 0;

  constructor(
    private readonly o: {
      ttlMs?: number;
      maxBytes?: number;
      maxRanges?: number;
      pacing?: Partial<TailPacingOptions>;
      groupPacing?: Partial<GroupPacingOptions>;
    } = {},
  ) {
    this.pacing = { ...DEFAULT_TAIL_PACING, ...o.pacing };
    this.groupPacing = { ...DEFAULT_GROUP_PACING, ...o.groupPacing };
  }

  /** Join `group`; answers the leave function. */
  join(group: string): () => void {
    let g = this.groups.get(group);
    if (!g) {
      g = { members: 0, starts: new Map(), lastCutAt: 0, meanStepMs: 0 };
      this.groups.set(group, g);
    }
    g.members++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const cur = this.groups.get(group);
      if (!cur) return;
      cur.members--;
      if (cur.members <= 0) {
        this.groups.delete(group);
        for (const [sql, k] of this.results) if (k.group === group) this.forget(sql, k);
      }
    };
  }

  members(group: string): number {
    return this.groups.get(group)?.members ?? 0;
  }

  /** The end of the range `(lo, …]` a member of `group` steps over, at most `hi`. */
  align(group: string, lo: number, hi: number): number {
    const g = this.groups.get(group);
    if (!g || g.members <= 1 || hi <= lo) return hi;
    const now = Date.now();
    const fresh = now - (this.o.ttlMs ?? 5000);
    const chosen = g.starts.get(lo);
    if (chosen && chosen.at >= fresh && chosen.hi <= hi) return chosen.hi;
    // Members ahead: catch up to the newest range they chose in one step, and step with them from
    // there (not along every range they took, whose results are gone by now).
    let frontier = lo;
    for (const [start, range] of g.starts) {
      if (range.at < fresh) g.starts.delete(start);
      else if (start > frontier && start < hi) frontier = start;
    }
    if (frontier > lo) return frontier;
    g.starts.delete(lo);
    g.starts.set(lo, { hi, at: now });
    g.lastCutAt = now;
    const maxRanges = this.o.maxRanges ?? 256;
    while (g.starts.size > maxRanges) {
      const oldest = g.starts.keys().next().value as number;
      g.starts.delete(oldest);
    }
    return hi;
  }

  /**
   * When a durable member of `group` standing at `lo` may step (epoch ms; 0: now). At once when it
   * can follow a range another member cut lately or catch up to one, when alone, or once the gap
   * since the group's last new range has passed: the members then step together over the same,
   * larger ranges (one shared read, fewer target writes and journal appends per row) instead of
   * each cutting its own as soon as its last step ends.
   */
  dueAt(group: string, lo: number): number {
    const g = this.groups.get(group);
    const { maxGapMs, costRatio } = this.groupPacing;
    if (!g || g.members <= 1 || maxGapMs <= 0) return 0;
    const now = Date.now();
    const fresh = now - (this.o.ttlMs ?? 5000);
    for (const [start, range] of g.starts) if (start >= lo && range.at >= fresh) return 0;
    return g.lastCutAt + Math.min(maxGapMs, costRatio * g.meanStepMs);
  }

  /** A member of `group` took `ms` for a step (the group's mean step time paces `dueAt`). */
  stepped(group: string, ms: number): void {
    const g = this.groups.get(group);
    if (!g) return;
    g.meanStepMs = g.meanStepMs === 0 ? ms : g.meanStepMs + 0.2 * (ms - g.meanStepMs);
  }

  /** The result of `sql` for a member of `group`: one `run` per distinct text while it is kept. */
  async read(group: string, sql: string, run: () => Promise<string>): Promise<string> {
    const g = this.groups.get(group);
    if (!g || g.members <= 1) return run();
    this.sweep();
    const kept = this.results.get(sql);
    if (kept && kept.group === group) {
      this.hits++;
      kept.taken++;
      const text = await kept.text;
      if (kept.taken >= g.members) this.forget(sql, kept);
      return text;
    }
    this.reads++;
    const entry: Kept = { group, text: run(), taken: 1, at: Date.now(), bytes: 0 };
    this.results.set(sql, entry);
    let text: string;
    try {
      text = await entry.text;
    } catch (e) {
      // A failed read is not shared: members asking later read again.
      this.forget(sql, entry);
      throw e;
    }
    if (this.results.get(sql) === entry) {
      entry.bytes = text.length + sql.length;
      this.keptBytes += entry.bytes;
      if (entry.taken >= g.members) this.forget(sql, entry);
      this.trim();
    }
    return text;
  }

  /** Results kept now (tests). */
  get kept(): number {
    return this.results.size;
  }

  private forget(sql: string, k: Kept): void {
    if (this.results.get(sql) !== k) return;
    this.results.delete(sql);
    this.keptBytes -= k.bytes;
  }

  private sweep(): void {
    const oldest = Date.now() - (this.o.ttlMs ?? 5000);
    for (const [sql, k] of this.results) {
      if (k.at >= oldest) break; // insertion order is age order
      this.forget(sql, k);
    }
  }

  private trim(): void {
    const max = this.o.maxBytes ?? 64 * 1024 * 1024;
    for (const [sql, k] of this.results) {
      if (this.keptBytes <= max) break;
      this.forget(sql, k);
    }
  }
}

interface Group {
  members: number;
  /** Ranges members chose lately, `lo -> (lo, hi]` and when, oldest first. */
  starts: Map<number, { hi: number; at: number }>;
  /** When a member last cut a new range (epoch ms). */
  lastCutAt: number;
  /** Members' mean step time (ms, moving average). */
  meanStepMs: number;
}

interface Kept {
  group: string;
  text: Promise<string>;
  taken: number;
  at: number;
  bytes: number;
}

/**
 * The group of an execution whose tail steps can share reads, or undefined: one source stream (not
 * a nested query's output), a tail that is a pure function of the range (no join parts, no lag()
 * carries, no dedup() keys of its own, no emit version, no function whose value depends on when it runs).
 */
export function sharedGroupKey(p: StreamingProgram): string | undefined {
  const source = p.sources[0];
  if (!p.tail || p.sources.length !== 1 || !source) return undefined;
  if (source.key.startsWith('derived:') || p.children.length > 0) return undefined;
  if (p.join || p.lags || (p.dedups?.length ?? 0) > 0 || p.tailVariants) return undefined;
  if (p.tail.has(P.emitVersion) || VOLATILE.test(p.tail.text)) return undefined;
  return `${source.key}\u0000${p.tail.text}`;
}
