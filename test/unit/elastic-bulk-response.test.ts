import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseBulk } from '../../src/connectors/inputs/elastic/bulk-parser.ts';
import {
  buildBulkResponse,
  jsonString,
  SequenceNumbers,
} from '../../src/connectors/inputs/elastic/bulk-response.ts';
import { sinkFailure } from '../../src/connectors/inputs/elastic/bulk-sink.ts';
import { DocumentIds } from '../../src/connectors/inputs/elastic/document-ids.ts';
import { err } from '../../src/errors/tributary-error.ts';

const FOUR = [
  '{"index":{"_index":"test","_id":"1"}}',
  '{"field1":"value1"}',
  '{"delete":{"_index":"test","_id":"2"}}',
  '{"create":{"_index":"test","_id":"3"}}',
  '{"field1":"value3"}',
  '{"update":{"_id":"1","_index":"test"}}',
  '{"doc":{"field2":"value2"}}',
  '',
].join('\n');

function respond(text: string, failure?: Parameters<typeof buildBulkResponse>[3]) {
  const parsed = parseBulk(text, { ids: new DocumentIds() });
  const outcome = buildBulkResponse(parsed.items, 3.4, new SequenceNumbers(), failure);
  return {
    outcome,
    json: JSON.parse(outcome.body.toString('utf8')) as Record<string, unknown>,
    text: outcome.body.toString('utf8'),
  };
}

test('keys come in the order took, errors, items, compact', () => {
  const { text, json } = respond(FOUR);
  assert.deepEqual(Object.keys(json), ['took', 'errors', 'items']);
  assert.ok(text.startsWith('{"took":3,"errors":false,"items":[{"index":{'), text.slice(0, 60));
  assert.ok(!/\s/.test(text));
});

test('one item per action, in request order, with the status and result per op', () => {
  const { json, outcome } = respond(FOUR);
  const items = json.items as Array<Record<string, Record<string, unknown>>>;
  assert.deepEqual(
    items.map((i) => Object.keys(i)),
    [['index'], ['delete'], ['create'], ['update']],
  );
  assert.deepEqual(items[0]!.index, {
    _index: 'test',
    _id: '1',
    _version: 1,
    result: 'created',
    _shards: { total: 1, successful: 1, failed: 0 },
    _seq_no: 0,
    _primary_term: 1,
    status: 201,
  });
  assert.deepEqual(
    items.map((i) => {
      const v = Object.values(i)[0]!;
      return [v.result, v.status, v._version, v._seq_no];
    }),
    [
      ['created', 201, 1, 0],
      ['deleted', 200, 2, 1],
      ['created', 201, 1, 2],
      ['updated', 200, 2, 3],
    ],
  );
  assert.equal(outcome.accepted, 4);
  assert.equal(outcome.rejected, 0);
});

test('_seq_no keeps increasing across requests of one listener', () => {
  const seq = new SequenceNumbers();
  const ids = new DocumentIds();
  const a = parseBulk('{"index":{"_index":"a"}}\n{"x":1}\n', { ids });
  const first = JSON.parse(buildBulkResponse(a.items, 0, seq).body.toString());
  const second = JSON.parse(buildBulkResponse(a.items, 0, seq).body.toString());
  assert.ok(second.items[0].index._seq_no > first.items[0].index._seq_no);
});

test('item errors: errors is true, the item has status and {type, reason}, _id null when unknown', () => {
  const { json, outcome } = respond(
    '{"index":{"_index":"a"}}\n[1]\n{"index":{"_index":"a"}}\n{"ok":1}\nnot json\n',
  );
  assert.equal(json.errors, true);
  const items = json.items as Array<Record<string, Record<string, unknown>>>;
  assert.equal(items.length, 3);
  const bad = items[0]!.index!;
  assert.equal(bad.status, 400);
  assert.equal(bad._id, null);
  assert.equal(bad._index, 'a');
  assert.deepEqual(Object.keys(bad.error as object), ['type', 'reason']);
  assert.equal((bad.error as { type: string }).type, 'document_parsing_exception');
  assert.equal(items[1]!.index!.status, 201);
  assert.equal(items[2]!.index!.status, 400);
  assert.equal(outcome.accepted, 1);
  assert.equal(outcome.rejected, 2);
  assert.match(outcome.firstError!, /^document_parsing_exception: /);
});

test('a rejected write fails every written item with the sink failure; parser errors keep theirs', () => {
  const { json, outcome } = respond(
    '{"index":{"_index":"a"}}\n{"x":1}\n{"index":{"_index":"a"}}\n[1]\n',
    sinkFailure(err('ENGINE_UNAVAILABLE', { detail: 'busy' })),
  );
  const items = json.items as Array<Record<string, Record<string, unknown>>>;
  assert.equal(json.errors, true);
  assert.equal(items[0]!.index!.status, 429);
  assert.deepEqual(items[0]!.index!.error, {
    type: 'es_rejected_execution_exception',
    reason: 'The engine is unavailable: busy',
  });
  assert.equal(items[1]!.index!.status, 400);
  assert.equal(outcome.accepted, 0);
  assert.equal(outcome.rejected, 2);
});

test('sinkFailure: 429 for backpressure (429/503 errors, retryable), 500 otherwise', () => {
  assert.equal(sinkFailure(err('ENGINE_UNAVAILABLE', { detail: 'x' })).status, 429);
  assert.equal(sinkFailure(Object.assign(new Error('queue full'), { retryable: true })).status, 429);
  const other = sinkFailure(err('UNKNOWN_STREAM', { name: 'logs' }));
  assert.deepEqual(other, { status: 500, type: 'exception', reason: "Stream logs doesn't exist" });
  assert.equal(sinkFailure('boom').status, 500);
});

test('the response is pure ASCII and valid JSON whatever the index, id or reason contain', () => {
  const { outcome, json } = respond(
    '{"index":{"_index":"lögs \\"q\\"","_id":"ïd-✓-😀\\u0001"}}\n{"a":1}\n{"index":{"_index":"x"}}\n"ünïcode ✓"\n',
  );
  const text = outcome.body.toString('latin1');
  assert.ok(/^[\x20-\x7e]*$/.test(text), text);
  const items = json.items as Array<Record<string, Record<string, unknown>>>;
  assert.equal(items[0]!.index!._index, 'lögs "q"');
  assert.equal(items[0]!.index!._id, 'ïd-✓-😀\u0001');
  assert.match(String((items[1]!.index!.error as { reason: string }).reason), /ünïcode ✓/);
  assert.equal(jsonString('plain'), '"plain"');
  assert.equal(JSON.parse(jsonString('a\\b"c\n')), 'a\\b"c\n');
});

test('a large response (built in pieces) is one valid JSON document', () => {
  const lines: string[] = [];
  for (let i = 0; i < 5000; i++) lines.push(`{"index":{"_index":"a","_id":"id-${i}"}}`, `{"i":${i}}`);
  const { json } = respond(`${lines.join('\n')}\n`);
  const items = json.items as Array<Record<string, Record<string, unknown>>>;
  assert.equal(items.length, 5000);
  assert.equal(items[4999]!.index!._id, 'id-4999');
});
