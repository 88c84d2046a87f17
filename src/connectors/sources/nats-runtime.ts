import type { NatsConnection } from '@nats-io/transport-node';
import { messageRow } from './message-rows.ts';
import { connectNats } from './nats-connection.ts';
import type { NatsProperties } from './nats-properties.ts';
import { BATCH_FLUSH_MS, RowBatcher } from './row-batcher.ts';
import { nextBackoff, pause, type SourceRuntime, type SourceWriter } from './source-runtime.ts';

/**
 * A running `nats` source (core NATS, at most once): subscribes to the subject (in the queue group
 * when given) and commits the messages received every 100 ms or 5,000 messages, whichever comes
 * first. A failed connection is reported and retried with backoff (0.5 s doubling to 30 s); once
 * connected the client reconnects by itself.
 */
export class NatsRuntime implements SourceRuntime {
  private readonly abort = new AbortController();
  private connection: NatsConnection | undefined;
  private loop: Promise<void> | undefined;
  private readonly batch: RowBatcher;

  constructor(
    private readonly name: string,
    private readonly p: NatsProperties,
    private readonly writer: SourceWriter,
  ) {
    this.batch = new RowBatcher(writer);
  }

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.connection?.drain().catch(() => undefined);
    await this.loop;
    await this.flush();
  }

  private async run(): Promise<void> {
    let delay = 500;
    const timer = setInterval(() => void this.flush(), BATCH_FLUSH_MS);
    try {
      while (!this.abort.signal.aborted) {
        try {
          this.connection = await connectNats(this.p, this.name);
          delay = 500;
          const sub = this.connection.subscribe(
            this.p.subject,
            this.p.queueGroup ? { queue: this.p.queueGroup } : {},
          );
          for await (const m of sub) {
            const r = messageRow(m.data, this.p.dataType);
            if ('error' in r) this.writer.reject(1, r.error);
            else if (this.batch.add(r.row)) await this.flush();
          }
          const closed = await this.connection.closed();
          if (closed) throw closed;
        } catch (e) {
          if (!this.abort.signal.aborted)
            this.writer.report(`nats ${this.p.servers.join(',')}: ${(e as Error).message}`);
        }
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
