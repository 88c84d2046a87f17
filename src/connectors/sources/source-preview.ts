import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import WebSocket from 'ws';
import { err } from '../../errors/tributary-error.ts';
import { messageRow } from './message-rows.ts';
import { connectNats } from './nats-connection.ts';
import { jetStreamProperties, natsProperties } from './nats-properties.ts';
import type { SourceType } from './source-properties.ts';
import { type WebSocketProperties, webSocketProperties } from './websocket-properties.ts';

/** Read up to `size` messages of a nats / nats_jetstream source for at most `timeoutMs`. */
export async function previewEvents(
  type: SourceType,
  properties: Record<string, unknown>,
  size: number,
  timeoutMs: number,
): Promise<unknown[]> {
  if (type === 'websocket') return previewWebSocket(webSocketProperties(properties), size, timeoutMs);
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

/** Up to `size` messages of a websocket (after its open message) within `timeoutMs`. */
function previewWebSocket(p: WebSocketProperties, size: number, timeoutMs: number): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const events: unknown[] = [];
    const ws = new WebSocket(p.url);
    let opened = false;
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      ws.terminate();
      resolve(events);
    };
    const timer = setTimeout(done, timeoutMs);
    ws.on('open', () => {
      opened = true;
      if (p.openMessage !== undefined) ws.send(p.openMessage);
    });
    ws.on('message', (data: WebSocket.RawData) => {
      if (finished) return;
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      const r = messageRow(bytes, p.dataType);
      events.push('error' in r ? { error: r.error } : r.row);
      if (events.length >= size) done();
    });
    ws.on('error', (e: Error) => {
      if (opened) return;
      clearTimeout(timer);
      reject(
        err('SOURCE_BAD_PROPERTY', { property: 'properties.url', detail: `cannot connect: ${e.message}` }),
      );
    });
    ws.on('close', () => done());
  });
}
