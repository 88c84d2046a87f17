// The runner's event-stream parsing: framing split anywhere, CRLF, comments, multi-line data, and
// what the final `query` event says about how a query ended.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiBase, errorOf } from '../../scripts/conformance/api-client.ts';
import { codeFromMessage, SseParser } from '../../scripts/conformance/sse-client.ts';

const STREAM =
  'event: query\ndata: {"id":"q1","status":"running","result":{"header":[{"name":"a","type":"int64"}]}}\n\n' +
  'data: [[9007199254740993]]\n\n' +
  ': a comment\n' +
  'event: metrics\ndata: {"count":1}\n\n' +
  'event: query\ndata: {"id":"q1","status":"finished"}\n\n';

test('events come out whole however the text is split', () => {
  const whole = new SseParser().feed(STREAM);
  assert.deepEqual(
    whole.map((e) => e.event),
    ['query', 'message', 'metrics', 'query'],
  );
  for (const size of [1, 2, 3, 7, 50]) {
    const p = new SseParser();
    const events = [];
    for (let i = 0; i < STREAM.length; i += size) events.push(...p.feed(STREAM.slice(i, i + size)));
    events.push(...p.end());
    assert.deepEqual(events, whole, `chunks of ${size}`);
  }
  assert.equal(whole[1]!.data, '[[9007199254740993]]');
});

test('CRLF line ends, several data lines, and a last event without its blank line', () => {
  const p = new SseParser();
  const events = [...p.feed('event: query\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata: [[1]]'), ...p.end()];
  assert.deepEqual(events, [
    { event: 'query', data: '{"a":\n1}' },
    { event: 'message', data: '[[1]]' },
  ]);
});

test('error bodies and codes', () => {
  assert.deepEqual(
    errorOf({
      status: 400,
      contentType: 'application/json',
      text: '{"code":47,"message":"x","system":"timeplusd"}',
    }),
    {
      code: 47,
      message: 'x',
    },
  );
  assert.deepEqual(
    errorOf({ status: 500, contentType: 'text/plain', text: 'Code: 60. DB::Exception: no table' }),
    {
      code: 60,
      message: 'Code: 60. DB::Exception: no table',
    },
  );
  assert.equal(codeFromMessage('nothing here'), undefined);
  assert.equal(apiBase('http://127.0.0.1:8000'), 'http://127.0.0.1:8000/default/api');
  assert.equal(apiBase('http://h:1/default/api/'), 'http://h:1/default/api');
});
