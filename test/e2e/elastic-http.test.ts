// The elastic input over raw HTTP (fetch): each action, each encoding and content type, the
// start-up calls of log shippers, and every error path (401, 404, 405, 413, unframeable bodies).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import zlib from 'node:zlib';
import type { BulkRow, BulkSink } from '../../src/connectors/inputs/elastic/bulk-sink.ts';
import { validateElasticInputSettings } from '../../src/connectors/inputs/elastic/elastic-input-definition.ts';
import { ElasticListener } from '../../src/connectors/inputs/elastic/elastic-listener.ts';
import type { InputSettingValue } from '../../src/connectors/inputs/input-settings.ts';
import { isTributaryError } from '../../src/errors/tributary-error.ts';

class MemorySink implements BulkSink {
  rows: BulkRow[] = [];
  async write(rows: BulkRow[]): Promise<void> {
    this.rows.push(...rows);
  }
}

async function startInput(settings: Record<string, InputSettingValue> = {}) {
  const sink = new MemorySink();
  const definition = validateElasticInputSettings('http_in', {
    type: 'elastic',
    target_stream: 'logs',
    tcp_port: 0,
    listen_host: '127.0.0.1',
    ...settings,
  });
  const listener = new ElasticListener({ definition, sink });
  const { port } = await listener.start();
  return { sink, listener, url: `http://127.0.0.1:${port}` };
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON bodies
  json: any;
}

async function call(url: string, init: RequestInit & { duplex?: 'half' } = {}): Promise<Answer> {
  const res = await fetch(url, init);
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  assert.equal(
    res.headers.get('x-elastic-product'),
    'Elasticsearch',
    `${init.method ?? 'GET'} ${url} -> ${res.status}`,
  );
  return { status: res.status, headers: res.headers, text, json };
}

function bulk(url: string, body: string | Buffer, headers: Record<string, string> = {}, path = '/_bulk') {
  return call(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', ...headers },
    body,
  });
}

function esError(a: Answer, status: number, type: string, reason?: RegExp) {
  assert.equal(a.status, status, a.text);
  assert.equal(a.json.status, status);
  assert.equal(a.json.error.type, type, a.text);
  assert.equal(a.json.error.root_cause[0].type, type);
  if (reason) assert.match(a.json.error.reason, reason);
}

const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

describe('elastic input over raw HTTP', () => {
  let input: Awaited<ReturnType<typeof startInput>>;
  before(async () => {
    input = await startInput();
  });
  after(async () => {
    await input.listener.stop();
  });

  test('index: 201 created, _raw is the line verbatim', async () => {
    input.sink.rows = [];
    const a = await bulk(input.url, '{"index":{"_index":"web","_id":"a1"}}\n{ "msg" : "x",  "n":1 }\n');
    assert.equal(a.status, 200);
    assert.match(a.headers.get('content-type') ?? '', /^application\/json/);
    assert.ok(a.text.startsWith('{"took":'));
    assert.deepEqual(a.json.items[0].index, {
      _index: 'web',
      _id: 'a1',
      _version: 1,
      result: 'created',
      _shards: { total: 1, successful: 1, failed: 0 },
      _seq_no: a.json.items[0].index._seq_no,
      _primary_term: 1,
      status: 201,
    });
    assert.deepEqual(input.sink.rows, [{ _raw: '{ "msg" : "x",  "n":1 }', _index: 'web', _id: 'a1' }]);
  });

  test('create: 201 created, generated _id', async () => {
    input.sink.rows = [];
    const a = await bulk(input.url, '{"create":{"_index":"web"}}\n{"m":1}\n');
    assert.equal(a.json.items[0].create.status, 201);
    assert.equal(a.json.items[0].create._id, input.sink.rows[0]!._id);
  });

  test('update: 200 updated, _raw is the update line', async () => {
    input.sink.rows = [];
    const a = await bulk(
      input.url,
      '{"update":{"_index":"web","_id":"a1"}}\n{"doc":{"m":2},"doc_as_upsert":true}\n',
    );
    assert.deepEqual([a.json.items[0].update.status, a.json.items[0].update.result], [200, 'updated']);
    assert.deepEqual(input.sink.rows, [
      { _raw: '{"doc":{"m":2},"doc_as_upsert":true}', _index: 'web', _id: 'a1' },
    ]);
  });

  test('delete: 200 deleted, a row with an empty _raw', async () => {
    input.sink.rows = [];
    const a = await bulk(input.url, '{"delete":{"_index":"web","_id":"a1"}}\n');
    assert.deepEqual([a.json.items[0].delete.status, a.json.items[0].delete.result], [200, 'deleted']);
    assert.deepEqual(input.sink.rows, [{ _raw: '', _index: 'web', _id: 'a1' }]);
  });

  test('PUT, /{index}/_bulk and the legacy /{index}/{type}/_bulk; query parameters ignored', async () => {
    input.sink.rows = [];
    const body = '{"index":{}}\n{"a":1}\n';
    assert.equal(
      (await call(`${input.url}/_bulk`, { method: 'PUT', body: '{"index":{"_index":"p"}}\n{"a":1}\n' }))
        .status,
      200,
    );
    assert.equal((await bulk(input.url, body, {}, '/idx1/_bulk?refresh=true&pipeline=x')).status, 200);
    assert.equal((await bulk(input.url, body, {}, '/idx2/_doc/_bulk')).status, 200);
    assert.equal(
      (await bulk(input.url, body, {}, '/_bulk?filter_path=errors,items.*.error,items.*.status&index=idx3'))
        .json.items[0].index.status,
      400,
    );
    assert.deepEqual(
      input.sink.rows.map((r) => r._index),
      ['p', 'idx1', 'idx2'],
    );
  });

  test('content types: x-ndjson, json (with charset), the compatible-with vendor types, none', async () => {
    input.sink.rows = [];
    for (const ct of [
      'application/x-ndjson',
      'application/json',
      'application/json; charset=UTF-8',
      'application/vnd.elasticsearch+x-ndjson; compatible-with=8',
      'application/vnd.elasticsearch+x-ndjson; compatible-with=9',
      'application/vnd.elasticsearch+json;compatible-with=7',
    ]) {
      const a = await bulk(input.url, '{"index":{"_index":"ct"}}\n{"a":1}\n', { 'content-type': ct });
      assert.equal(a.json.errors, false, ct);
    }
    const none = await call(`${input.url}/_bulk`, {
      method: 'POST',
      body: Buffer.from('{"index":{"_index":"ct"}}\n{"a":1}\n'),
    });
    assert.equal(none.json.errors, false);
    assert.equal(input.sink.rows.length, 7);
  });

  test('gzip and deflate bodies (Content-Encoding), CRLF, no trailing newline', async () => {
    input.sink.rows = [];
    const text = '{"index":{"_index":"z"}}\r\n{"a":"gzip ✓"}\r\n{"delete":{"_index":"z","_id":"9"}}';
    assert.equal(
      (await bulk(input.url, zlib.gzipSync(text), { 'content-encoding': 'gzip' })).json.errors,
      false,
    );
    assert.equal(
      (await bulk(input.url, zlib.deflateSync(text), { 'content-encoding': 'deflate' })).json.errors,
      false,
    );
    assert.deepEqual(
      input.sink.rows.map((r) => r._raw),
      ['{"a":"gzip ✓"}', '', '{"a":"gzip ✓"}', ''],
    );
  });

  test('unknown meta keys, _type and op_type', async () => {
    input.sink.rows = [];
    const a = await bulk(
      input.url,
      '{"index":{"_index":"fb","_type":"_doc","pipeline":"p","require_data_stream":true,"op_type":"create","x":{"y":1}}}\n{"a":1}\n',
    );
    assert.equal(a.json.items[0].create.status, 201);
    assert.equal(input.sink.rows.length, 1);
  });

  test('per-item errors: errors true, HTTP 200, the good items land', async () => {
    input.sink.rows = [];
    const a = await bulk(
      input.url,
      [
        '{"index":{"_index":"e"}}',
        '{"good":1}',
        '{"index":{"_index":"e"',
        '{"skipped as its source":1}',
        '{"explode":{"_index":"e"}}',
        '{"source of the unknown action":1}',
        '{"create":{"_index":"e"}}',
        '"not an object"',
        '{"update":{"_index":"e"}}',
        '{"doc":{}}',
        '{"index":{"_index":"e"}}',
        '{"good":2}',
        '{"index":{"_index":"e"}}',
      ].join('\n'),
    );
    assert.equal(a.status, 200);
    assert.equal(a.json.errors, true);
    assert.deepEqual(
      a.json.items.map((i: Record<string, { status: number; error?: { type: string } }>) => {
        const [op, r] = Object.entries(i)[0]!;
        return [op, r.status, r.error?.type];
      }),
      [
        ['index', 201, undefined],
        ['index', 400, 'x_content_parse_exception'],
        ['index', 400, 'illegal_argument_exception'],
        ['create', 400, 'document_parsing_exception'],
        ['update', 400, 'action_request_validation_exception'],
        ['index', 201, undefined],
        ['index', 400, 'action_request_validation_exception'],
      ],
    );
    assert.deepEqual(
      input.sink.rows.map((r) => r._raw),
      ['{"good":1}', '{"good":2}'],
    );
  });

  test('a body that cannot be framed at all, or is empty: request-level 400', async () => {
    input.sink.rows = [];
    esError(
      await bulk(input.url, 'hello world\nthis is not ndjson\n'),
      400,
      'x_content_parse_exception',
      /Malformed action\/metadata line \[1\]/,
    );
    esError(
      await bulk(input.url, '[{"index":{}}]'),
      400,
      'illegal_argument_exception',
      /expected START_OBJECT but found \[START_ARRAY\]/,
    );
    esError(await bulk(input.url, ''), 400, 'action_request_validation_exception', /no requests added/);
    esError(
      await bulk(input.url, Buffer.from('garbage'), { 'content-encoding': 'gzip' }),
      400,
      'parse_exception',
      /not valid gzip/,
    );
    esError(
      await bulk(input.url, 'x', { 'content-encoding': 'compress' }),
      400,
      'illegal_argument_exception',
      /unsupported Content-Encoding/,
    );
    assert.equal(input.sink.rows.length, 0);
  });

  test('start-up calls of shippers answer so they proceed', async () => {
    const head = await call(`${input.url}/`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    const root = await call(`${input.url}/`);
    assert.equal(root.json.version.number, '8.17.0');
    assert.equal(root.json.version.build_flavor, 'default');
    assert.equal((await call(`${input.url}/_license?human=false`)).json.license.status, 'active');
    assert.equal((await call(`${input.url}/_xpack`)).json.license.type, 'basic');
    assert.equal((await call(`${input.url}/_cluster/health`)).json.status, 'green');
    const nodes = (await call(`${input.url}/_nodes/http`)).json.nodes;
    assert.equal(
      (Object.values(nodes)[0] as { http: { publish_address: string } }).http.publish_address,
      input.url.slice(7),
    );
    assert.equal(
      (await call(`${input.url}/_index_template/filebeat-8.17.0`, { method: 'HEAD' })).status,
      200,
    );
    assert.deepEqual(
      (
        await call(`${input.url}/_index_template/filebeat-8.17.0`, {
          method: 'PUT',
          body: '{"index_patterns":["x"]}',
        })
      ).json,
      { acknowledged: true },
    );
    assert.equal((await call(`${input.url}/_ilm/policy/filebeat`)).status, 200);
    assert.deepEqual((await call(`${input.url}/_ilm/policy/filebeat`, { method: 'PUT', body: '{}' })).json, {
      acknowledged: true,
    });
    assert.deepEqual((await call(`${input.url}/_ingest/pipeline/p`, { method: 'PUT', body: '{}' })).json, {
      acknowledged: true,
    });
    assert.equal((await call(`${input.url}/_data_stream/logs-generic-default`)).status, 200);
    assert.equal((await call(`${input.url}/_alias/a`)).status, 200);
    assert.equal((await call(`${input.url}/logstash`, { method: 'HEAD' })).status, 200);
  });

  test('unknown paths are an ES-style 404, wrong methods a 405, both with the product header', async () => {
    esError(
      await call(`${input.url}/_search`),
      404,
      'resource_not_found_exception',
      /no handler found for uri \[\/_search\]/,
    );
    const notAllowed = await call(`${input.url}/_bulk`);
    esError(notAllowed, 405, 'method_not_allowed_exception');
    assert.equal(notAllowed.headers.get('allow'), 'POST, PUT');
  });

  test('counters: requests, bulk requests, docs accepted and rejected, bytes, last error', async () => {
    const before = input.listener.stats();
    const body = '{"index":{"_index":"c"}}\n{"a":1}\n{"index":{"_index":"c"}}\n[1]\n';
    await bulk(input.url, body);
    await call(`${input.url}/`);
    const after = input.listener.stats();
    assert.equal(after.requests - before.requests, 2);
    assert.equal(after.bulk_requests - before.bulk_requests, 1);
    assert.equal(after.docs_accepted - before.docs_accepted, 1);
    assert.equal(after.docs_rejected - before.docs_rejected, 1);
    assert.equal(after.bytes_received - before.bytes_received, Buffer.byteLength(body));
    assert.match(after.last_error!.message, /^document_parsing_exception/);
  });
});

describe('elastic input: Basic auth', () => {
  let input: Awaited<ReturnType<typeof startInput>>;
  before(async () => {
    input = await startInput({ username: 'timeplus', password: 'timeplus_password' });
  });
  after(async () => {
    await input.listener.stop();
  });

  test('right credentials pass', async () => {
    const a = await bulk(input.url, '{"index":{"_index":"a"}}\n{"a":1}\n', {
      authorization: basic('timeplus', 'timeplus_password'),
    });
    assert.equal(a.json.errors, false);
    assert.equal(
      (await call(`${input.url}/`, { headers: { authorization: basic('timeplus', 'timeplus_password') } }))
        .status,
      200,
    );
  });

  test('missing credentials: 401 security_exception with WWW-Authenticate, on bulk and start-up calls', async () => {
    for (const [method, path] of [
      ['POST', '/_bulk'],
      ['GET', '/'],
      ['GET', '/_license'],
    ] as const) {
      const a = await call(`${input.url}${path}`, {
        method,
        ...(method === 'POST' ? { body: '{"index":{}}\n{}\n' } : {}),
      });
      esError(
        a,
        401,
        'security_exception',
        new RegExp(`missing authentication credentials for REST request \\[${path}\\]`),
      );
      assert.equal(a.headers.get('www-authenticate'), 'Basic realm="security", charset="UTF-8"');
    }
    const head = await call(`${input.url}/`, { method: 'HEAD' });
    assert.equal(head.status, 401);
    assert.equal(input.sink.rows.length, 1);
  });

  test('wrong credentials: 401 naming the user', async () => {
    const a = await bulk(input.url, '{"index":{"_index":"a"}}\n{"a":1}\n', {
      authorization: basic('timeplus', 'wrong'),
    });
    esError(a, 401, 'security_exception', /unable to authenticate user \[timeplus\]/);
    assert.match(input.listener.stats().last_error!.message, /^401 security_exception/);
  });
});

describe('elastic input: body size limit', () => {
  let input: Awaited<ReturnType<typeof startInput>>;
  before(async () => {
    input = await startInput({ max_body_bytes: 4096 });
  });
  after(async () => {
    await input.listener.stop();
  });

  const big = `${'{"index":{"_index":"big"}}\n{"pad":"' + 'x'.repeat(200) + '"}\n'}`.repeat(100);

  test('a declared Content-Length over the limit: 413', async () => {
    esError(
      await bulk(input.url, big),
      413,
      'content_too_long_exception',
      /larger than the limit of \[4096\] bytes/,
    );
  });

  test('a chunked body that grows over the limit: 413', async () => {
    const chunks = [big.slice(0, 3000), big.slice(3000, 6000), big.slice(6000)];
    const stream = new ReadableStream({
      pull(controller) {
        const c = chunks.shift();
        if (c === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(c));
      },
    });
    esError(
      await call(`${input.url}/_bulk`, {
        method: 'POST',
        body: stream,
        duplex: 'half',
        headers: { 'content-type': 'application/x-ndjson' },
      }),
      413,
      'content_too_long_exception',
    );
  });

  test('a small gzip body that inflates over the limit: 413', async () => {
    const gz = zlib.gzipSync(big);
    assert.ok(gz.length < 4096);
    esError(
      await bulk(input.url, gz, { 'content-encoding': 'gzip' }),
      413,
      'content_too_long_exception',
      /decompressed/,
    );
  });

  test('the connection still serves requests after a 413, and bodies under the limit pass', async () => {
    const a = await bulk(input.url, '{"index":{"_index":"small"}}\n{"a":1}\n');
    assert.equal(a.json.errors, false);
    assert.equal(input.sink.rows.length, 1);
  });
});

describe('elastic input: listening', () => {
  test('a port already in use fails cleanly with INPUT_PORT_IN_USE', async () => {
    const first = await startInput();
    const port = Number(new URL(first.url).port);
    try {
      const definition = validateElasticInputSettings('second', {
        type: 'elastic',
        target_stream: 'logs',
        tcp_port: port,
        listen_host: '127.0.0.1',
      });
      const second = new ElasticListener({ definition, sink: new MemorySink() });
      await assert.rejects(second.start(), (e: unknown) => {
        assert.ok(isTributaryError(e));
        assert.equal(e.errorName, 'INPUT_PORT_IN_USE');
        assert.equal(e.status, 409);
        assert.equal(e.message, `Cannot listen on 127.0.0.1:${port}: the address is already in use`);
        return true;
      });
      // The first input is unaffected.
      assert.equal((await call(`${first.url}/`)).status, 200);
    } finally {
      await first.listener.stop();
    }
  });

  test('an address that is not on this machine fails with INPUT_LISTEN_FAILED', async () => {
    const definition = validateElasticInputSettings('far', {
      type: 'elastic',
      target_stream: 'logs',
      tcp_port: 0,
      listen_host: '203.0.113.7',
    });
    await assert.rejects(
      new ElasticListener({ definition, sink: new MemorySink() }).start(),
      (e: unknown) => {
        assert.ok(isTributaryError(e));
        assert.equal(e.errorName, 'INPUT_LISTEN_FAILED');
        assert.match(e.message, /Cannot listen on 203\.0\.113\.7:0: EADDRNOTAVAIL/);
        return true;
      },
    );
  });

  test('after stop the port is free again', async () => {
    const first = await startInput();
    const port = Number(new URL(first.url).port);
    await first.listener.stop();
    const again = await startInput({ tcp_port: port });
    assert.equal((await call(`${again.url}/`)).status, 200);
    await again.listener.stop();
  });
});

describe('elastic input: misbehaving clients', () => {
  test('an upload aborted mid-body is counted, and the listener keeps serving', async () => {
    const input = await startInput();
    try {
      const { port } = new URL(input.url);
      const socket = connect(Number(port), '127.0.0.1');
      await new Promise<void>((r) => socket.once('connect', () => r()));
      socket.write(
        'POST /_bulk HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"index":{"_index":"a"}}\n',
      );
      await new Promise((r) => setTimeout(r, 50));
      socket.destroy();
      for (let i = 0; i < 50 && input.listener.stats().failed_requests === 0; i++)
        await new Promise((r) => setTimeout(r, 20));
      assert.equal(input.listener.stats().failed_requests, 1);
      assert.match(input.listener.stats().last_error!.message, /aborted/);
      assert.equal((await bulk(input.url, '{"index":{"_index":"a"}}\n{"a":1}\n')).json.errors, false);
      assert.equal(input.sink.rows.length, 1);
    } finally {
      await input.listener.stop();
    }
  });

  test('a malformed HTTP request gets a 400 that still says Elasticsearch', async () => {
    const input = await startInput();
    try {
      const { port } = new URL(input.url);
      const socket = connect(Number(port), '127.0.0.1');
      let answer = '';
      socket.on('data', (d) => {
        answer += d.toString();
      });
      const closed = new Promise((r) => socket.once('close', r));
      socket.write('THIS IS NOT HTTP\r\n\r\n');
      await closed;
      assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.match(answer, /X-Elastic-Product: Elasticsearch/);
    } finally {
      await input.listener.stop();
    }
  });

  test('more bulk requests in progress than allowed: request-level 429', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const sink: BulkSink = {
      async write() {
        await gate;
      },
    };
    const definition = validateElasticInputSettings('busy', {
      type: 'elastic',
      target_stream: 'logs',
      tcp_port: 0,
      listen_host: '127.0.0.1',
    });
    const listener = new ElasticListener({ definition, sink, maxConcurrentBulks: 1 });
    const { port } = await listener.start();
    const url = `http://127.0.0.1:${port}`;
    try {
      const first = bulk(url, '{"index":{"_index":"a"}}\n{"a":1}\n');
      await new Promise((r) => setTimeout(r, 50));
      esError(await bulk(url, '{"index":{"_index":"a"}}\n{"a":2}\n'), 429, 'es_rejected_execution_exception');
      release();
      assert.equal((await first).json.errors, false);
    } finally {
      release();
      await listener.stop();
    }
  });
});
