import WebSocket from 'ws';
import { messageRow } from './message-rows.ts';
import { BATCH_FLUSH_MS, RowBatcher } from './row-batcher.ts';
import { nextBackoff, pause, type SourceRuntime, type SourceWriter } from './source-runtime.ts';
import type { WebSocketProperties } from './websocket-properties.ts';

/**
 * A running `websocket` source: connects, sends the open message, turns each message into a row
 * and commits them every 100 ms (or 5,000 messages). A refused connection or a closed socket is
 * reported and the source reconnects with backoff (0.5 s doubling to 30 s), sending the open
 * message again. At most once: messages received while the stream refuses writes are lost
 * (counted as failures).
 */
export class WebSocketRuntime implements SourceRuntime {
  private readonly abort = new AbortController();
  private socket: WebSocket | undefined;
  private loop: Promise<void> | undefined;
  private readonly batch: RowBatcher;

  constructor(
    private readonly p: WebSocketProperties,
    private readonly writer: SourceWriter,
  ) {
    this.batch = new RowBatcher(writer);
  }

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.socket?.terminate();
    await this.loop;
    await this.flush();
  }

  /** One connection's life: resolves when it closes (true when it had opened). */
  private connectOnce(): Promise<boolean> {
    return new Promise((resolve) => {
      let opened = false;
      const ws = new WebSocket(this.p.url);
      this.socket = ws;
      ws.on('open', () => {
        opened = true;
        if (this.p.openMessage !== undefined) ws.send(this.p.openMessage);
      });
      ws.on('message', (data: WebSocket.RawData) => {
        const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        const r = messageRow(bytes, this.p.dataType);
        if ('error' in r) this.writer.reject(1, r.error);
        else if (this.batch.add(r.row)) void this.flush();
      });
      ws.on('error', (e: Error) => {
        if (!this.abort.signal.aborted) this.writer.report(`websocket ${this.p.url}: ${e.message}`);
      });
      ws.on('close', (code: number) => {
        if (opened && !this.abort.signal.aborted)
          this.writer.report(`websocket ${this.p.url}: closed (${code})`);
        resolve(opened);
      });
    });
  }

  private async run(): Promise<void> {
    let delay = 500;
    const timer = setInterval(() => void this.flush(), BATCH_FLUSH_MS);
    try {
      while (!this.abort.signal.aborted) {
        if (await this.connectOnce()) delay = 500;
        if (this.abort.signal.aborted) break;
        await pause(delay, this.abort.signal);
        delay = nextBackoff(delay);
      }
    } finally {
      clearInterval(timer);
    }
  }

  private flush(): Promise<void> {
    return this.batch.flush();
  }
}
