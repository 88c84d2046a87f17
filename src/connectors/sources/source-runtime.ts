/** Writes a source's events into its target stream, counting successes and failures. */
export interface SourceWriter {
  /**
   * Commit `events` (one ingest request); `idempotencyId` makes a retry of the same events write
   * nothing twice. Rejects when the stream refuses them (counted as failures).
   */
  write(events: Array<Record<string, unknown>>, idempotencyId?: string): Promise<void>;
  /** Count `events` failures that never reached the stream (a message that is not JSON, ...). */
  reject(events: number, message: string): void;
  /** A failing peer (connection refused, bad credentials): recorded in stats and status. */
  report(message: string): void;
}

/** A running source of any type. */
export interface SourceRuntime {
  start(): void;
  stop(): Promise<void>;
}

/** Wait `ms`, or less when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}

/** Reconnect delays: 0.5 s doubling up to 30 s. */
export function nextBackoff(ms: number): number {
  return Math.min(ms * 2, 30_000);
}
