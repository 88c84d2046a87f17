/**
 * Holds a materialized view's writes while it is paused. A write enters the gate before it goes to
 * the target and leaves after it is committed; while the gate is closed, writes wait at it, which
 * holds the execution back (backpressure) with its position and state kept, so nothing is written
 * while paused and nothing is lost at resume.
 */
export class PauseGate {
  private closed = false;
  private waiting: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];

  /** Writes waiting at the closed gate. */
  get held(): number {
    return this.waiting.length;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    this.closed = true;
  }

  open(): void {
    this.closed = false;
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) w.resolve();
  }

  /** The view is stopping: writes waiting at the gate fail (their execution is being aborted). */
  release(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) w.reject(new Error('the materialized view is stopping'));
  }

  async enter(): Promise<void> {
    if (this.closed) {
      await new Promise<void>((resolve, reject) => {
        this.waiting.push({ resolve, reject });
      });
    }
    this.inFlight++;
  }

  leave(): void {
    this.inFlight--;
    if (this.inFlight === 0) {
      const idle = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of idle) w();
    }
  }

  /** Resolves when no write is in flight. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
