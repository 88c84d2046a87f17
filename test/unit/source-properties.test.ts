/** Source property validation (every type), templates, and the stats windows. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  GENERATOR_TEMPLATES,
  TEMPLATE_COLUMNS,
  templateEvent,
} from '../../src/connectors/sources/generator-templates.ts';
import { messageRow } from '../../src/connectors/sources/message-rows.ts';
import { jetStreamProperties, natsProperties } from '../../src/connectors/sources/nats-properties.ts';
import {
  checkProperties,
  checkType,
  parseDuration,
  streamGeneratorProperties,
} from '../../src/connectors/sources/source-properties.ts';
import { SourceStats } from '../../src/connectors/sources/source-stats.ts';
import { webSocketProperties } from '../../src/connectors/sources/websocket-properties.ts';
import { TributaryError } from '../../src/errors/tributary-error.ts';

/** The property a SOURCE_BAD_PROPERTY error names (or the error's name when it is another). */
function refused(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof TributaryError)
      return e.errorName === 'SOURCE_BAD_PROPERTY' ? String(e.params.property) : e.errorName;
    throw e;
  }
  return 'accepted';
}

test('every template makes events with exactly the columns it documents', () => {
  for (const t of GENERATOR_TEMPLATES) {
    for (let i = 0; i < 50; i++) {
      const e = templateEvent(t);
      assert.deepEqual(
        Object.keys(e),
        TEMPLATE_COLUMNS[t].map(([name]) => name),
        t,
      );
      for (const [name, type] of TEMPLATE_COLUMNS[t]) {
        const expected = type === 'string' ? 'string' : type === 'bool' ? 'boolean' : 'number';
        assert.equal(typeof e[name], expected, `${t}.${name}`);
      }
    }
  }
});

test('stream_generator: template required, eps or interval, unknown properties named', () => {
  assert.deepEqual(streamGeneratorProperties({ template: 'iot' }), { template: 'iot', eps: 5 });
  assert.deepEqual(streamGeneratorProperties({ template: 'devops', eps: 250 }), {
    template: 'devops',
    eps: 250,
  });
  assert.deepEqual(streamGeneratorProperties({ template: 'user_logins', interval: '200ms' }), {
    template: 'user_logins',
    eps: 5,
  });
  assert.equal(
    refused(() => streamGeneratorProperties({})),
    'properties.template',
  );
  assert.equal(
    refused(() => streamGeneratorProperties({ template: 'weather' })),
    'properties.template',
  );
  assert.equal(
    refused(() => streamGeneratorProperties({ template: 'iot', eps: 0 })),
    'properties.eps',
  );
  assert.equal(
    refused(() => streamGeneratorProperties({ template: 'iot', interval: 'soon' })),
    'properties.interval',
  );
  assert.equal(
    refused(() => streamGeneratorProperties({ template: 'iot', rate: 1 })),
    'properties.rate',
  );
});

test('types: the four the spec names; anything else names type', () => {
  for (const t of ['stream_generator', 'websocket', 'nats', 'nats_jetstream']) assert.equal(checkType(t), t);
  assert.equal(
    refused(() => checkType('kafka')),
    'type',
  );
  assert.equal(
    refused(() => checkType(undefined)),
    'type',
  );
  assert.equal(
    refused(() => checkProperties('nats', [], 'x')),
    'properties',
  );
});

test('nats and nats_jetstream properties', () => {
  const n = natsProperties({
    url: 'nats://a:4222, nats://b:4222',
    subject: 'ev.>',
    username: 'u',
    password: 'p',
  });
  assert.deepEqual(n.servers, ['nats://a:4222', 'nats://b:4222']);
  assert.equal(n.dataType, 'json');
  assert.equal(
    refused(() => natsProperties({ subject: 's' })),
    'properties.url',
  );
  assert.equal(
    refused(() => natsProperties({ url: 'http://a', subject: 's' })),
    'properties.url',
  );
  assert.equal(
    refused(() => natsProperties({ url: 'nats://a' })),
    'properties.subject',
  );
  assert.equal(
    refused(() => natsProperties({ url: 'nats://a', subject: 's', username: 'u' })),
    'properties.password',
  );
  assert.equal(
    refused(() => natsProperties({ url: 'nats://a', subject: 's', data_type: 'xml' })),
    'properties.data_type',
  );
  assert.equal(
    refused(() => natsProperties({ url: 'nats://a', subject: 's', stream: 'S' })),
    'properties.stream',
  );
  const j = jetStreamProperties({ url: 'nats://a', stream: 'ORDERS' }, 'my_src');
  assert.equal(j.durableName, 'tributary_my_src');
  assert.equal(j.deliverPolicy, 'all');
  assert.equal(j.batchSize, 1000);
  assert.equal(
    refused(() => jetStreamProperties({ url: 'nats://a' }, 'x')),
    'properties.stream',
  );
  assert.equal(
    refused(() => jetStreamProperties({ url: 'nats://a', stream: 'S', deliver_policy: 'first' }, 'x')),
    'properties.deliver_policy',
  );
  assert.equal(
    refused(() => jetStreamProperties({ url: 'nats://a', stream: 'S', batch_size: 0 }, 'x')),
    'properties.batch_size',
  );
  assert.equal(
    refused(() => jetStreamProperties({ url: 'nats://a', stream: 'S', durable_name: 'a b' }, 'x')),
    'properties.durable_name',
  );
});

test('websocket properties', () => {
  assert.deepEqual(
    webSocketProperties({ url: 'wss://x/feed', open_message: { sub: 1 }, open_message_type: 'json' }),
    {
      url: 'wss://x/feed',
      dataType: 'json',
      openMessage: '{"sub":1}',
    },
  );
  assert.equal(
    refused(() => webSocketProperties({})),
    'properties.url',
  );
  assert.equal(
    refused(() => webSocketProperties({ url: 'ftp://x' })),
    'properties.url',
  );
  assert.equal(
    refused(() => webSocketProperties({ url: 'ws://x', open_message: { a: 1 } })),
    'properties.open_message',
  );
});

test('messages as rows: json objects, text as raw, the rest refused with a reason', () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  assert.deepEqual(messageRow(enc('{"a":1}'), 'json'), { row: { a: 1 } });
  assert.deepEqual(messageRow(enc('hello'), 'text'), { row: { raw: 'hello' } });
  assert.ok('error' in messageRow(enc('[1]'), 'json'));
  assert.ok('error' in messageRow(enc('nope'), 'json'));
});

test('durations and the stats windows', () => {
  assert.equal(parseDuration('200ms', 'x'), 200);
  assert.equal(parseDuration('1.5m', 'x'), 90_000);
  assert.equal(parseDuration('1d', 'x'), 86_400_000);
  assert.equal(
    refused(() => parseDuration('1 week', 'metrics_time_range')),
    'metrics_time_range',
  );
  const s = new SourceStats();
  const now = Date.parse('2026-11-25T12:00:30Z');
  s.startedAt = now - 5000;
  s.recordSuccess(10, 600, now - 20 * 60_000);
  s.recordSuccess(5, 120, now);
  s.recordFailure(1, 'old', now - 2 * 3_600_000);
  s.recordFailure(2, 'new', now);
  const snap = s.snapshot(10 * 60_000, 3_600_000, now);
  assert.equal(snap.success_count, 15);
  assert.equal(snap.failure_count, 3);
  assert.equal(snap.uptime, 5000);
  assert.deepEqual(snap.throughput, [{ time: '2026-11-25T12:00:00.000Z', value: 2 }]);
  assert.deepEqual(
    snap.errors.map((e) => e.message),
    ['new'],
  );
});
