/** The numbers of one failure limiter (docs/operations.md, "Authentication limits"). */
export interface FailureLimits {
  /** Failed attempts allowed (also at once) before the key has to wait. */
  freeFailures: number;
  /** The wait after the last free failure; it doubles with each further failure... */
  baseBackoffMs: number;
  /** ...up to this. */
  maxBackoffMs: number;
  /** A key with no attempt for this long is forgotten. */
  forgetAfterMs: number;
  /** At most this many keys are remembered; the least recently used go first. */
  maxKeys: number;
}

interface Entry {
  failures: number;
  /** Attempts being checked now: they count as failures until they end. */
  pending: number;
  blockedUntil: number;
  lastAt: number;
}

/**
 * Failed attempts per key (a client address, a username) with exponential backoff. An attempt
 * is admitted only while the key's failures plus the attempts still being checked stay under
 * `freeFailures` (so a burst of concurrent attempts cannot all get through), or, once past it,
 * one at a time after the wait. The k-th failure beyond the free ones blocks the key for
 * `baseBackoffMs * 2^k`, at most `maxBackoffMs`. Memory is bounded by `maxKeys`.
 */
export class FailureLimiter {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly limits: FailureLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds the key must wait before an attempt (0: it may try now). */
  waitMs(key: string): number {
    const now = this.now();
    this.sweep(now);
    const e = this.entries.get(key);
    if (!e) return 0;
    if (e.blockedUntil > now) return e.blockedUntil - now;
    if (e.pending === 0 || e.failures + e.pending < this.limits.freeFailures) return 0;
    // Past the free failures, one attempt at a time: the one in flight ends within a second.
    return 1000;
  }

  /** Count an attempt that is being checked now (call `end` once it has been). */
  begin(key: string): void {
    const e = this.touch(key);
    e.pending++;
  }

  /** The attempt ended: a failure counts (and may block the key); a success forgets it if `reset`. */
  end(key: string, failed: boolean, reset: boolean): void {
    const now = this.now();
    const e = this.touch(key);
    e.pending = Math.max(0, e.pending - 1);
    if (!failed) {
      if (reset && e.pending === 0) this.entries.delete(key);
      return;
    }
    e.failures++;
    const beyond = e.failures - this.limits.freeFailures;
    if (beyond >= 0) {
      const wait = Math.min(this.limits.baseBackoffMs * 2 ** Math.min(beyond, 30), this.limits.maxBackoffMs);
      e.blockedUntil = now + wait;
    }
  }

  /** Keys remembered now (for tests and bounds). */
  size(): number {
    return this.entries.size;
  }

  /** The key's entry, moved to the back of the use order (created if missing). */
  private touch(key: string): Entry {
    const now = this.now();
    const e = this.entries.get(key) ?? { failures: 0, pending: 0, blockedUntil: 0, lastAt: now };
    e.lastAt = now;
    this.entries.delete(key);
    this.entries.set(key, e);
    while (this.entries.size > this.limits.maxKeys) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    return e;
  }

  /** Forget keys unused for `forgetAfterMs` (the map is in order of last use). */
  private sweep(now: number): void {
    for (const [key, e] of this.entries) {
      if (now - e.lastAt < this.limits.forgetAfterMs) return;
      if (e.pending > 0 || e.blockedUntil > now) return;
      this.entries.delete(key);
    }
  }
}
