import { P } from './sql-template.ts';
import type { StreamingProgram } from './streaming-program.ts';

/** How tail steps are paced (issue 12: cost per event, not per step). */
export interface TailPacingOptions {
  /**
   * The longest a tail waits after its last step started before it steps again while commits keep
   * arriving (ms). 0: a step per commit, as soon as the previous step is done.
   */
  maxGapMs: number;
  /** The gap is this many times the tail's own mean step time, up to `maxGapMs`. */
  costRatio: number;
  /** With this many rows pending a tail steps at once (its step is large enough already). */
  maxPendingRows: number;
  /**
   * The share of a busy stream's commits (0 to 0.5) a tail may hold back to read together with
   * the next commit, when `maxGapMs` is 0 (`LateShareHold`). 0: none, a step per commit.
   */
  lateShare: number;
  /** A held commit waits at most this long for the next one (ms); a stream slower than that is not held. */
  maxHoldMs: number;
}

/**
 * Measured on this 2-core machine (bench/README.md "latency", 2026-11-25): a tail step costs
 * 2-3 ms of CPU whatever its size (an engine call is ~1 ms for `SELECT 1` alone), so at 100
 * commits/s a step per commit costs 0.2-0.3 cores; steps at least 20 ms apart cover 2 commits each.
 */
export const DEFAULT_TAIL_PACING: TailPacingOptions = {
  maxGapMs: 0,
  costRatio: 10,
  maxPendingRows: 4096,
  lateShare: 0,
  maxHoldMs: 15,
};

/**
 * Off by default (maxGapMs 0): on a quiet machine (load < 1, 2026-11-26) a 20 ms gap took the tail's
 * added CPU at 1,000 events/s from 0.39 to 0.22-0.30 cores but its p50 latency from 8.4-8.7 to 17-18
 * ms, past the 12 ms the issue keeps as the floor; operators who prefer the CPU turn it on.
 */

/** How durable members of a shared-read group (views over one stream) step together (shared-step-reads.ts). */
export interface GroupPacingOptions {
  /** The longest the group waits after its last new range before it cuts the next (ms); 0: off. */
  maxGapMs: number;
  /** The wait is this many times the members' mean step time, up to `maxGapMs`. */
  costRatio: number;
}

/**
 * Views sharing a stream cut a new range at most every two of their mean step times, and wait at
 * most 200 ms for it (TRIBUTARY_VIEW_STEP_GAP_MS). Measured (bench/README.md "mv", 2026-11-26):
 * 10 views at 30,000 events/s made 114-138 target writes/s instead of 228-270 and took 21.5-24.2
 * µs of CPU per input event instead of 33.5-36.9, at the same lag p50 (44-51 ms against 41-53).
 */
export const DEFAULT_GROUP_PACING: GroupPacingOptions = { maxGapMs: 200, costRatio: 2 };

/** Weight of the newest step in the mean step time. */
const COST_WEIGHT = 0.2;

/** Weight of the newest commit in the share of commits held back (about the last 10 commits). */
const HELD_WEIGHT = 0.1;

/** Intervals between commits longer than this are a quiet stream, not its rate. */
const QUIET_MS = 1000;

/**
 * When a tail may run its next step. Two ways, one per option:
 *
 * - **Gap** (`maxGapMs` > 0): at once when the stream is quiet (no step started within the gap),
 *   otherwise when as many commits are pending as arrive within the gap on average (rounded), or
 *   at the latest once the gap since the last step's start has passed. The gap follows the tail's
 *   own step time (`costRatio` times it, at most `maxGapMs`). Counting commits matters: with
 *   commits every 10 ms and a 20 ms gap, a timer alone tends to fire just before a commit arrives
 *   and make every row wait the whole gap (measured: p50 +20 ms); stepping on the second pending
 *   commit makes rows wait 5 ms on average. Every commit but the last of a step waits, so on a
 *   stream committing every 10 ms half the rows wait a commit interval: the median moves by one.
 * - **Late share** (`lateShare` > 0, gap 0): a commit is held back to be read with the next one
 *   only while fewer than `lateShare` of the stream's recent commits were held, and only when the
 *   next is due within `maxHoldMs` (a busy stream); otherwise it is read at once, as are two
 *   pending commits. Most rows keep the latency of a step per commit while the steps of a busy
 *   stream drop to about `1 - lateShare` per commit; a held row waits about one commit interval,
 *   at most `maxHoldMs`. Measured (bench/README.md, "latency", 2026-11-26): at 100 commits/s,
 *   0.3-0.45 took a tail's added CPU from 0.31-0.36 to 0.15-0.23 cores but its p50 from 9-11 to
 *   16-18 ms (the latencies spread wide enough that delaying a third of the rows moves the
 *   median), so it is off by default.
 *
 * The rows a tail emits do not depend on how its ranges are cut (`pacedTail`), so pacing changes
 * when rows leave, never which.
 */
export class TailPacer {
  private lastStartAt = Number.NEGATIVE_INFINITY;
  private meanStepMs = 0;
  private lastCommitAt = Number.NEGATIVE_INFINITY;
  private meanCommitMs = 0;
  /** Recent share of commits held back (late-share mode). */
  private heldShare = 0;
  /** Commits seen; the commit (its number) the current hold decision is about, and until when it holds. */
  private commits = 0;
  private decidedFor = 0;
  private holdUntil = 0;

  constructor(private readonly o: TailPacingOptions) {}

  /** A commit of the source arrived at `at` (epoch ms). */
  committed(at: number): void {
    const interval = at - this.lastCommitAt;
    this.lastCommitAt = at;
    this.commits++;
    this.heldShare *= 1 - HELD_WEIGHT;
    if (interval > QUIET_MS) return;
    this.meanCommitMs =
      this.meanCommitMs === 0 ? interval : this.meanCommitMs + COST_WEIGHT * (interval - this.meanCommitMs);
  }

  /** When the next step may start (epoch ms) with `pendingRows` rows of `pendingCommits` commits waiting. */
  dueAt(pendingRows: number, pendingCommits: number): number {
    if (pendingRows >= this.o.maxPendingRows) return 0;
    if (this.o.maxGapMs <= 0) return this.o.lateShare > 0 ? this.holdDueAt(pendingCommits) : 0;
    const gap = Math.min(this.o.maxGapMs, this.meanStepMs * this.o.costRatio);
    const perGap = this.meanCommitMs > 0 ? Math.round(gap / this.meanCommitMs) : Number.POSITIVE_INFINITY;
    if (pendingCommits >= Math.max(perGap, 1)) return 0;
    return this.lastStartAt + gap;
  }

  /** A step ran from `startAt` for `ms` milliseconds. */
  stepped(startAt: number, ms: number): void {
    this.lastStartAt = startAt;
    this.meanStepMs = this.meanStepMs === 0 ? ms : this.meanStepMs + COST_WEIGHT * (ms - this.meanStepMs);
  }

  /** Late-share mode: hold the one pending commit (the newest) while the share allows it. */
  private holdDueAt(pendingCommits: number): number {
    if (pendingCommits !== 1) return 0;
    // Decided once per commit: later wake-ups for the same commit keep its answer.
    if (this.decidedFor === this.commits) return this.holdUntil;
    this.decidedFor = this.commits;
    const busy = this.meanCommitMs > 0 && this.meanCommitMs <= this.o.maxHoldMs;
    if (!busy || this.heldShare >= Math.min(this.o.lateShare, 0.5)) {
      this.holdUntil = 0;
      return 0;
    }
    this.heldShare += HELD_WEIGHT;
    this.holdUntil = this.lastCommitAt + Math.min(this.o.maxHoldMs, 2 * this.meanCommitMs);
    return this.holdUntil;
  }
}

/**
 * A tail whose rows are a function of each row alone, so that one step over `(a, c]` emits what
 * two steps over `(a, b]` and `(b, c]` emit, in the same order: no join, no lag() carried between
 * steps, no emit_version() or count of rows emitted before, no dedup() keys kept between steps,
 * no changelog, one source.
 */
export function pacedTail(p: StreamingProgram): boolean {
  return (
    p.tail !== undefined &&
    p.join === undefined &&
    p.lags === undefined &&
    p.tailVariants === undefined &&
    p.changelog === undefined &&
    (p.dedups ?? []).length === 0 &&
    p.sources.length === 1 &&
    p.children.length === 0 &&
    !p.tail.has(P.emitVersion) &&
    !p.tail.has(P.emitted)
  );
}
