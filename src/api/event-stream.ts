import type { ServerResponse } from 'node:http';

/**
 * The server-sent-event channel of a query: `event: query` and `event: metrics` carry JSON
 * objects; result batches are data events with no `event:` line (clients see type `message`).
 * Every payload is one line of JSON, as line-based clients require.
 */
export class EventStream {
  private closed = false;
  private drainWaiters: Array<() => void> = [];

  constructor(private readonly res: ServerResponse) {
    res.on('drain', () => {
      for (const w of this.drainWaiters.splice(0)) w();
    });
    res.on('close', () => {
      this.closed = true;
      for (const w of this.drainWaiters.splice(0)) w();
    });
  }

  open(): void {
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
  }

  get isClosed(): boolean {
    return this.closed || this.res.destroyed;
  }

  /** A named event with a JSON object payload. */
  event(name: string, payload: unknown): boolean {
    return this.write(`event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  /** A batch of result rows, each already JSON array text. */
  rows(rows: readonly string[]): boolean {
    return this.write(`data: [${rows.join(',')}]\n\n`);
  }

  /** Resolves when the socket can take more (immediately if it can). */
  drained(): Promise<void> {
    if (this.isClosed || !this.res.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  end(): void {
    if (this.isClosed) return;
    this.closed = true;
    this.res.end();
  }

  private write(chunk: string): boolean {
    if (this.isClosed) return false;
    return this.res.write(chunk);
  }
}
