import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import { err } from '../../errors/tributary-error.ts';
import { messageRow } from './message-rows.ts';
import { connectNats } from './nats-connection.ts';
import { jetStreamProperties, natsProperties } from './nats-properties.ts';
import type { SourceType } from './source-properties.ts';

/** Read up to `size` messages of a nats / nats_jetstream source for at most `timeoutMs`. */
export async function previewEvents(
  type: SourceType,
  properties: Record<string, unknown>,
  size: number,
  timeoutMs: number,
): Promise<unknown[]> {
  const jet = type === 'nats_jetstream' ? jetStreamProperties(properties, 'preview') : undefined;
  const p = jet ?? natsProperties(properties);
  let nc: Awaited<ReturnType<typeof connectNats>>;
  try {
    nc = await connectNats({ ...p }, 'preview');
  } catch (e) {
    throw err('SOURCE_BAD_PROPERTY', {
      property: 'properties.url',
      detail: `cannot connect: ${(e as Error).message}`,
    });
  }
  const events: unknown[] = [];
  const add = (data: Uint8Array) => {
    const r = messageRow(data, p.dataType);
    events.push('error' in r ? { error: r.error } : r.row);
  };
  try {
    if (jet) {
      // An ordered (ephemeral) consumer: nothing is acknowledged, the durable consumer is untouched.
      const c = await jetstream(nc).consumers.get(jet.stream, {
        deliver_policy: DeliverPolicy.All,
        ...(p.subject ? { filter_subjects: [p.subject] } : {}),
      });
      const messages = await c.fetch({ max_messages: size, expires: timeoutMs });
      for await (const m of messages) add(m.data);
    } else {
      const sub = nc.subscribe(p.subject, { max: size, timeout: timeoutMs });
      try {
        for await (const m of sub) add(m.data);
      } catch {
        // the timeout ends the preview with what arrived
      }
    }
  } finally {
    await nc.close().catch(() => undefined);
  }
  return events;
}
