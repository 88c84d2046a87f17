import {
  AckPolicy,
  type Consumer,
  DeliverPolicy,
  type JsMsg,
  jetstream,
  jetstreamManager,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { messageRow } from './message-rows.ts';
import { connectNats } from './nats-connection.ts';
import type { JetStreamProperties } from './nats-properties.ts';
import { nextBackoff, pause, type SourceRuntime, type SourceWriter } from './source-runtime.ts';

const FLUSH_MS = 50;

const DELIVER: Record<JetStreamProperties['deliverPolicy'], DeliverPolicy> = {
  all: DeliverPolicy.All,
  new: DeliverPolicy.New,
  last: DeliverPolicy.Last,
};

/**
 * A running `nats_jetstream` source, exactly once into the stream: a durable pull consumer
 * (explicit acks) is consumed continuously and committed every 50 ms or batch_size messages; each
 * message is committed with the idempotency id
 * `nats_jetstream:<stream>:<consumer>:<stream sequence>` and acknowledged only after its commit
 * is durable. A crash between commit and ack redelivers the message after a restart; its id makes
 * the second commit write nothing, and it is acknowledged then. A message that is not a JSON
 * object (data_type json) is counted as a failure and terminated (never redelivered); a commit the
 * stream refuses is negatively acknowledged, so JetStream delivers it again later.
 */
export class JetStreamRuntime implements SourceRuntime {
  private readonly abort = new AbortController();
  private connection: NatsConnection | undefined;
  private loop: Promise<void> | undefined;
  private messages: { stop(): void } | undefined;
  private buffer: JsMsg[] = [];
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly name: string,
    private readonly p: JetStreamProperties,
    private readonly writer: SourceWriter,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.messages?.stop();
    await this.loop;
  }

  private async consumer(nc: NatsConnection): Promise<Consumer> {
    const jsm = await jetstreamManager(nc);
    const maxAckPending = Math.max(1000, this.p.batchSize * 2);
    let existing: Awaited<ReturnType<typeof jsm.consumers.info>> | undefined;
    try {
      existing = await jsm.consumers.info(this.p.stream, this.p.durableName);
    } catch {
      existing = undefined;
    }
    if (existing) {
      const pending = existing.config.max_ack_pending ?? 0;
      if (pending > 0 && pending < this.p.batchSize)
        await jsm.consumers.update(this.p.stream, this.p.durableName, { max_ack_pending: maxAckPending });
    } else {
      await jsm.consumers.add(this.p.stream, {
        durable_name: this.p.durableName,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DELIVER[this.p.deliverPolicy],
        // A fetch of batch_size messages must not wait on the server's default of 1,000 unacked.
        max_ack_pending: maxAckPending,
        ...(this.p.subject ? { filter_subject: this.p.subject } : {}),
      });
    }
    return jetstream(nc).consumers.get(this.p.stream, this.p.durableName);
  }

  private async run(): Promise<void> {
    let delay = 500;
    while (!this.abort.signal.aborted) {
      try {
        this.connection = await connectNats(this.p, this.name);
        const consumer = await this.consumer(this.connection);
        delay = 500;
        // consume() keeps pull requests outstanding; messages are committed every 50 ms or
        // batch_size messages, whichever comes first.
        const messages = await consumer.consume({ max_messages: this.p.batchSize });
        this.messages = messages;
        const timer = setInterval(() => void this.flush(), FLUSH_MS);
        try {
          for await (const m of messages) {
            this.buffer.push(m);
            if (this.buffer.length >= this.p.batchSize) await this.flush();
          }
        } finally {
          clearInterval(timer);
          await this.flush();
        }
      } catch (e) {
        if (!this.abort.signal.aborted)
          this.writer.report(
            `nats_jetstream ${this.p.servers.join(',')} stream ${this.p.stream}: ${(e as Error).message}`,
          );
      } finally {
        await this.connection?.close().catch(() => undefined);
        this.connection = undefined;
      }
      if (this.abort.signal.aborted) break;
      await pause(delay, this.abort.signal);
      delay = nextBackoff(delay);
    }
  }

  private flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.buffer.length === 0) return;
      const batch = this.buffer;
      this.buffer = [];
      await this.commit(batch);
    });
    return this.flushing;
  }

  private async commit(batch: JsMsg[]): Promise<void> {
    const prefix = `nats_jetstream:${this.p.stream}:${this.p.durableName}:`;
    await Promise.all(
      batch.map(async (m) => {
        const r = messageRow(m.data, this.p.dataType);
        if ('error' in r) {
          this.writer.reject(1, `message ${m.seq}: ${r.error}`);
          m.term();
          return;
        }
        try {
          await this.writer.write([r.row], `${prefix}${m.seq}`);
        } catch {
          m.nak(1000);
          return;
        }
        // A lost ack only means a redelivery, which the idempotency id makes write nothing.
        m.ack();
      }),
    );
  }
}
