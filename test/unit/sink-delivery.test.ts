/**
 * The pure parts of sinks and http external streams: payloads (JSON lines keep 64-bit integers
 * exact, templates), Retry-After, delivery positions, URL redaction, property checks naming the
 * property, and the http external stream's requests.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { positionAfter } from '../../src/connectors/sinks/delivered-mark.ts';
import { retryWait } from '../../src/connectors/sinks/delivery.ts';
import { redactUrl, retryAfterMs } from '../../src/connectors/sinks/http-request.ts';
import { fillRowFormat, fillTemplate, jsonLines, rowObject } from '../../src/connectors/sinks/row-payload.ts';
import { maskedProperties, sinkDelivery } from '../../src/connectors/sinks/sink-properties.ts';
import { isTributaryError } from '../../src/errors/tributary-error.ts';
import { externalStreamKind } from '../../src/external/streams/external-stream-kinds.ts';

test('JSON lines: one object per row, 64-bit integers and plain values exact', () => {
  const out = jsonLines(['id', 'big', 'x', 's'], ['[1,9007199254740993,1.5,"a\\"b"]', '[2,3,null,"c"]']);
  assert.equal(
    out,
    '{"id":1,"big":9007199254740993,"x":1.5,"s":"a\\"b"}\n{"id":2,"big":3,"x":null,"s":"c"}\n',
  );
});

test('templates: {{.col}} and {{col}} (sinks), $-brace col:Escaping (Template format)', () => {
  const row = rowObject(['id', 'v', 'big'], '[7,"it\'s\\n",12345678901234567890]');
  assert.equal(fillTemplate('#{{.id}} {{ v }} {{.big}} {{.none}}!', row), "#7 it's\n 12345678901234567890 !");
  assert.equal(
    // biome-ignore lint/suspicious/noTemplateCurlyInString: ClickHouse's Template row format, not JS
    fillRowFormat('${id}|${v:JSON}|${v:Quoted}|${v}|${v:Raw}', row),
    "7|\"it's\\n\"|'it\\'s\n'|it's\\n|it's\n",
  );
});

test('Retry-After in seconds or as a date; backoff doubles up to its cap; a given wait wins', () => {
  assert.equal(retryAfterMs('2'), 2000);
  assert.equal(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6_000);
  assert.equal(retryAfterMs('soon'), undefined);
  assert.equal(retryAfterMs(null), undefined);
  const b = { baseMs: 100, maxMs: 350 };
  assert.deepEqual(
    [1, 2, 3, 4].map((f) => retryWait(f, b)),
    [100, 200, 350, 350],
  );
  assert.equal(retryWait(3, b, 1000), 1000);
});

test('delivery positions order by seq, part, batch', () => {
  assert.ok(positionAfter({ seq: 1, part: 0, batch: 0 }, undefined));
  assert.ok(positionAfter({ seq: 2, part: 0, batch: 0 }, { seq: 1, part: 5, batch: 9 }));
  assert.ok(positionAfter({ seq: 1, part: 1, batch: 0 }, { seq: 1, part: 0, batch: 9 }));
  assert.ok(positionAfter({ seq: 1, part: 0, batch: 2 }, { seq: 1, part: 0, batch: 1 }));
  assert.ok(!positionAfter({ seq: 1, part: 0, batch: 1 }, { seq: 1, part: 0, batch: 1 }));
});

test('URLs in messages lose user info, query strings and Slack webhook secrets', () => {
  assert.equal(redactUrl('https://u:p@x.example/in?token=abc'), 'https://x.example/in?%E2%80%A6');
  assert.equal(
    redactUrl('https://hooks.slack.com/services/T0/B0/secret'),
    'https://hooks.slack.com/services/%E2%80%A6',
  );
});

test('sink properties: each wrong one is named; credentials are masked', () => {
  const named = (type: 'http' | 'slack', p: unknown, property: string) => {
    assert.throws(
      () => sinkDelivery(type, p),
      (e: unknown) => isTributaryError(e) && e.status === 400 && e.message.includes(property),
    );
  };
  named('http', {}, 'properties.url');
  named('http', { url: 'http://x', batch_size: 0 }, 'properties.batch_size');
  named('http', { url: 'http://x', http_method: 'GET' }, 'properties.http_method');
  named('http', { url: 'http://x', headers: ['a'] }, 'properties.headers');
  named('slack', { url: 'http://x', body_template: 'x' }, 'properties.body_template');
  const r = sinkDelivery('http', { url: 'http://x/in', headers: { A: 'b' }, body_template: '{"n":{{.id}}}' });
  const req = r.delivery.request(['id'], ['[1]', '[2]'], 'k-1');
  assert.equal(req.body, '{"n":1}\n{"n":2}');
  assert.equal(req.headers['content-type'], 'application/json');
  assert.equal(req.headers['Idempotency-Key'], 'k-1');
  assert.deepEqual(r.templateColumns, ['id']);
  const slack = sinkDelivery('slack', { url: 'http://x/hook' });
  assert.equal(slack.delivery.batchSize, 1);
  assert.equal(slack.delivery.minIntervalMs, 1000);
  assert.equal(slack.delivery.request(['a'], ['["z"]'], 'k').body, '{"text":"{\\"a\\":\\"z\\"}"}');
  assert.deepEqual(
    maskedProperties({ url: 'u', headers: { Authorization: 'x', 'X-Api-Key': 'y', Team: 't' } }),
    {
      url: 'u',
      headers: { Authorization: '******', 'X-Api-Key': '******', Team: 't' },
    },
  );
});

test('the http external stream kind: settings checked by name, secrets known, RawBLOB lines', () => {
  const http = externalStreamKind('http');
  assert.equal(http.readable, false);
  assert.ok(http.isSecret('password') && http.isSecret('http_header_Authorization') && !http.isSecret('url'));
  assert.throws(() => externalStreamKind('kafka'), /type/);
  const columns = [{ name: 'line', type: 'string' }];
  assert.throws(
    () => http.check({ columns, settings: { type: 'http', url: 'http://x', ssl_ca_pem: 'x' } }),
    /ssl_ca_pem/,
  );
  const shape = {
    columns,
    settings: { type: 'http', url: 'http://x/raw', data_format: 'RawBLOB', write_method: 'put' },
  };
  http.check(shape);
  const req = http.delivery?.('raw', shape).delivery.request(['line'], ['["a b"]', '["c"]'], 'k');
  assert.equal(req?.body, 'a b\nc\n');
  assert.equal(req?.method, 'PUT');
});
