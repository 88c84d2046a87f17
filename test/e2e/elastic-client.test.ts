// The elastic input driven by the official Elasticsearch JS client (`@elastic/elasticsearch`),
// with request compression on: its product check, `info`, plain `bulk` and the `helpers.bulk`
// helper, against a real listener on 127.0.0.1 writing into an in-memory sink.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, errors } from '@elastic/elasticsearch';
import type { BulkRow, BulkSink } from '../../src/connectors/inputs/elastic/bulk-sink.ts';
import { validateElasticInputSettings } from '../../src/connectors/inputs/elastic/elastic-input-definition.ts';
import { ElasticListener } from '../../src/connectors/inputs/elastic/elastic-listener.ts';
import { err } from '../../src/errors/tributary-error.ts';

/** Keeps the rows; `failNext` rejects the next writes with the given errors. */
class MemorySink implements BulkSink {
  rows: BulkRow[] = [];
  writes = 0;
  failNext: unknown[] = [];
  async write(rows: BulkRow[]): Promise<void> {
    this.writes++;
    const failure = this.failNext.shift();
    if (failure !== undefined) throw failure;
    this.rows.push(...rows);
  }
}

const USER = 'timeplus';
const PASSWORD = 'timeplus_password';

describe('elastic input with the official Elasticsearch client', () => {
  const sink = new MemorySink();
  let listener: ElasticListener;
  let node: string;
  let client: Client;

  before(async () => {
    const definition = validateElasticInputSettings('client_in', {
      type: 'elastic',
      target_stream: 'logs',
      tcp_port: 0,
      listen_host: '127.0.0.1',
      username: USER,
      password: PASSWORD,
      es_version: '8.15.2',
    });
    listener = new ElasticListener({ definition, sink });
    const { port } = await listener.start();
    node = `http://127.0.0.1:${port}`;
    client = new Client({ node, auth: { username: USER, password: PASSWORD }, compression: true });
  });

  after(async () => {
    await client.close();
    await listener.stop();
  });

  test('info and ping pass the product check and report the configured version', async () => {
    const info = await client.info();
    assert.equal(info.version.number, '8.15.2');
    assert.equal(info.tagline, 'You Know, for Search');
    assert.equal(await client.ping(), true);
  });

  test('plain bulk: every action, gzip-compressed, with per-op results', async () => {
    sink.rows = [];
    const response = await client.bulk({
      operations: [
        { index: { _index: 'test', _id: '1' } },
        { field1: 'value1' },
        { delete: { _index: 'test', _id: '2' } },
        { create: { _index: 'test', _id: '3' } },
        { field1: 'value3' },
        { update: { _id: '1', _index: 'test' } },
        { doc: { field2: 'value2' } },
        { index: { _index: 'test' } },
        { message: 'no id', n: 1.5, nested: { ok: true } },
      ],
    });
    assert.equal(response.errors, false);
    assert.deepEqual(
      response.items.map((i) => {
        const [op, r] = Object.entries(i)[0]!;
        return [op, r.status, r.result];
      }),
      [
        ['index', 201, 'created'],
        ['delete', 200, 'deleted'],
        ['create', 201, 'created'],
        ['update', 200, 'updated'],
        ['index', 201, 'created'],
      ],
    );
    assert.deepEqual(sink.rows.slice(0, 4), [
      { _raw: '{"field1":"value1"}', _index: 'test', _id: '1' },
      { _raw: '', _index: 'test', _id: '2' },
      { _raw: '{"field1":"value3"}', _index: 'test', _id: '3' },
      { _raw: '{"doc":{"field2":"value2"}}', _index: 'test', _id: '1' },
    ]);
    assert.equal(sink.rows[4]!._raw, '{"message":"no id","n":1.5,"nested":{"ok":true}}');
    assert.match(sink.rows[4]!._id, /^[A-Za-z0-9_-]{20}$/);
    assert.equal(response.items[4]!.index!._id, sink.rows[4]!._id);
  });

  test('plain bulk with the index in the path (/{index}/_bulk)', async () => {
    sink.rows = [];
    const response = await client.bulk({ index: 'from-path', operations: [{ create: {} }, { a: 1 }] });
    assert.equal(response.errors, false);
    assert.equal(response.items[0]!.create!._index, 'from-path');
    assert.equal(sink.rows[0]!._index, 'from-path');
  });

  test('plain bulk reports per-item errors and still writes the rest', async () => {
    sink.rows = [];
    const response = await client.bulk({
      operations: [{ delete: { _index: 'x' } }, { index: { _index: 'x' } }, { ok: true }],
    });
    assert.equal(response.errors, true);
    assert.equal(response.items[0]!.delete!.status, 400);
    assert.match(response.items[0]!.delete!.error!.reason ?? '', /id is missing/);
    assert.equal(response.items[1]!.index!.status, 201);
    assert.equal(sink.rows.length, 1);
  });

  test('helpers.bulk: thousands of documents over several compressed requests all land', async () => {
    sink.rows = [];
    const before = listener.stats();
    const docs = Array.from({ length: 3000 }, (_, i) => ({
      '@timestamp': new Date(1_700_000_000_000 + i).toISOString(),
      message: `GET /items/${i} 200 "Mozilla/5.0" host=web-${i % 7} ${'pad '.repeat(20)}`,
      i,
    }));
    const result = await client.helpers.bulk({
      datasource: docs,
      onDocument: (doc) =>
        doc.i % 2 === 0
          ? { create: { _index: 'helper-logs' } }
          : { index: { _index: 'helper-logs', _id: `d${doc.i}` } },
      flushBytes: 64 * 1024,
      concurrency: 3,
    });
    assert.equal(result.total, 3000);
    assert.equal(result.successful, 3000);
    assert.equal(result.failed, 0);
    assert.equal(sink.rows.length, 3000);
    const raws = new Set(sink.rows.map((r) => r._raw));
    for (const d of docs) assert.ok(raws.has(JSON.stringify(d)));
    assert.ok(sink.rows.some((r) => r._id === 'd1'));
    const after = listener.stats();
    assert.ok(after.bulk_requests - before.bulk_requests >= 4, 'several requests');
    assert.equal(after.docs_accepted - before.docs_accepted, 3000);
    const uncompressed = docs.reduce((n, d) => n + JSON.stringify(d).length + 40, 0);
    assert.ok(
      after.bytes_received - before.bytes_received < uncompressed / 3,
      'the bodies came gzip-compressed',
    );
  });

  test('helpers.bulk retries documents the sink rejected with backpressure (429)', async () => {
    sink.rows = [];
    sink.failNext = [err('ENGINE_UNAVAILABLE', { detail: 'write queue full' })];
    const dropped: unknown[] = [];
    const result = await client.helpers.bulk({
      datasource: [{ a: 1 }, { a: 2 }],
      onDocument: () => ({ create: { _index: 'retry' } }),
      onDrop: (d) => dropped.push(d),
      retries: 3,
      wait: 10,
    });
    assert.equal(result.successful, 2);
    assert.ok(result.retry >= 2, `retried: ${result.retry}`);
    assert.deepEqual(dropped, []);
    assert.equal(sink.rows.length, 2);
  });

  test('helpers.bulk drops documents the sink rejected for good (500) to onDrop', async () => {
    sink.rows = [];
    sink.failNext = [new Error('target stream has the wrong schema')];
    const dropped: Array<{ status: number; error: { type: string; reason: string } | null }> = [];
    const result = await client.helpers.bulk({
      datasource: [{ a: 1 }],
      onDocument: () => ({ index: { _index: 'bad' } }),
      onDrop: (d) => dropped.push(d as never),
    });
    assert.equal(result.failed, 1);
    assert.equal(dropped[0]!.status, 500);
    assert.match(dropped[0]!.error!.reason, /wrong schema/);
    assert.equal(listener.stats().last_error?.message, 'exception: target stream has the wrong schema');
  });

  test('wrong or missing credentials: ResponseError 401 security_exception', async () => {
    for (const auth of [{ username: USER, password: 'nope' }, undefined]) {
      const other = new Client({ node, ...(auth ? { auth } : {}), compression: true });
      await assert.rejects(
        other.bulk({ operations: [{ index: { _index: 'x' } }, { a: 1 }] }),
        (e: unknown) => {
          assert.ok(e instanceof errors.ResponseError);
          assert.equal(e.statusCode, 401);
          assert.equal((e.body as { error: { type: string } }).error.type, 'security_exception');
          return true;
        },
      );
      await other.close();
    }
  });
});

describe('elastic input without credentials configured', () => {
  test('any client credentials are accepted', async () => {
    const sink = new MemorySink();
    const definition = validateElasticInputSettings('open_in', {
      type: 'elastic',
      target_stream: 'logs',
      tcp_port: 0,
      listen_host: '127.0.0.1',
    });
    const listener = new ElasticListener({ definition, sink });
    const { port } = await listener.start();
    try {
      for (const auth of [
        { username: 'anyone', password: 'anything' },
        { apiKey: 'c29tZTprZXk=' },
        undefined,
      ]) {
        const client = new Client({ node: `http://127.0.0.1:${port}`, ...(auth ? { auth } : {}) });
        const r = await client.bulk({ operations: [{ index: { _index: 'open' } }, { a: 1 }] });
        assert.equal(r.errors, false);
        await client.close();
      }
      assert.equal(sink.rows.length, 3);
    } finally {
      await listener.stop();
    }
  });
});
