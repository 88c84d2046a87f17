// StreamBulkSink: one ingest call per bulk request with the three columns, and stream errors mapped
// to the item status the listener answers (retryable -> 429, anything else -> 500).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sinkFailure } from '../../src/connectors/inputs/elastic/bulk-sink.ts';
import { StreamBulkSink } from '../../src/connectors/inputs/stream-bulk-sink.ts';
import { engineError } from '../../src/engine/engine-error.ts';
import { err } from '../../src/errors/tributary-error.ts';
import type { StreamStore } from '../../src/stream/stream-store.ts';

function fakeStreams(fail?: unknown) {
  const calls: unknown[][] = [];
  const streams = {
    async ingest(...args: unknown[]) {
      calls.push(args);
      if (fail !== undefined) throw fail;
      return { fromSn: 0, count: 0 };
    },
  } as unknown as StreamStore;
  return { streams, calls };
}

test('one ingest call per write, columns _raw, _index, _id, all required', async () => {
  const { streams, calls } = fakeStreams();
  const sink = new StreamBulkSink(streams, 'default', 'logs');
  await sink.write([
    { _raw: '{"a":1}', _index: 'i', _id: '1' },
    { _raw: '', _index: 'i', _id: '2' },
  ]);
  assert.deepEqual(calls, [
    [
      'default',
      'logs',
      {
        columns: ['_raw', '_index', '_id'],
        rows: [
          ['{"a":1}', 'i', '1'],
          ['', 'i', '2'],
        ],
      },
      { requiredColumns: ['_raw', '_index', '_id'] },
    ],
  ]);
});

async function failureOf(e: unknown, db = 'default') {
  const sink = new StreamBulkSink(fakeStreams(e).streams, db, 'logs');
  try {
    await sink.write([{ _raw: '{}', _index: 'i', _id: '1' }]);
  } catch (thrown) {
    return sinkFailure(thrown);
  }
  assert.fail('the write should fail');
}

test('a stream that cannot take writes for now is a 429 (shippers retry)', async () => {
  const f = await failureOf(
    err('INGEST_STREAM_FAILED', { stream: 'logs', detail: 'WAL cannot be truncated' }),
  );
  assert.equal(f.status, 429);
  assert.equal(f.type, 'es_rejected_execution_exception');
  assert.match(f.reason, /^stream logs refused the write: Stream logs cannot accept writes/);
  assert.equal((await failureOf(err('ENGINE_UNAVAILABLE', { detail: 'x' }))).status, 429);
  const memory = engineError(
    Object.assign(new Error('Code: 241. DB::Exception: Memory limit exceeded. (MEMORY_LIMIT_EXCEEDED)'), {
      clickhouseCode: 241,
    }),
  );
  assert.equal((await failureOf(memory)).status, 429);
});

test('anything else is a 500 naming the stream', async () => {
  const f = await failureOf(err('UNKNOWN_STREAM', { name: 'other.logs' }), 'other');
  assert.equal(f.status, 500);
  assert.equal(f.type, 'exception');
  assert.match(f.reason, /^stream other\.logs refused the write: Stream other\.logs doesn't exist/);
  assert.equal((await failureOf(new Error('boom'))).status, 500);
});
