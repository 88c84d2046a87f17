// The elastic input wired into the product: CREATE/DROP/SHOW INPUT[S] through the REST API, the
// official `@elastic/elasticsearch` client (gzip on) writing into a real stream, a streaming SELECT
// seeing the documents arrive, the error paths, the topology, and a restart.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Client, errors } from '@elastic/elasticsearch';
import { ERRORS, type ErrorName } from '../../src/errors/catalogue.ts';
import { ADMIN, authHeader, type Harness, startHarness } from '../helpers/harness.ts';
import { readSse } from '../helpers/sse.ts';

let h: Harness;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function occupy(port: number): Promise<Server> {
  const s = createServer();
  await new Promise<void>((r) => s.listen({ port, host: '127.0.0.1', exclusive: true }, r));
  return s;
}

/** Run a statement through POST /v1beta2/queries. */
function run(sql: string) {
  return h.call('POST', '/v1beta2/queries', { body: { sql } });
}

async function ok(sql: string): Promise<void> {
  const r = await run(sql);
  assert.equal(r.statusCode, 204, `${sql}: ${r.statusCode} ${r.body}`);
}

/** The statement fails with the catalogue error `name`; answers the message. */
async function fails(sql: string, name: ErrorName): Promise<string> {
  const r = await run(sql);
  const body = r.json() as { code: number; message: string };
  assert.equal(body.code, ERRORS[name].code, `${sql}: ${r.statusCode} ${r.body}`);
  assert.equal(r.statusCode, ERRORS[name].status);
  return body.message;
}

async function rows(sql: string): Promise<unknown[][]> {
  const r = await h.call('POST', '/v1beta2/exec', { body: { sql, type: 'historical' } });
  assert.equal(r.statusCode, 200, `${sql}: ${r.body}`);
  return (r.json() as { data: unknown[][] }).data;
}

interface InputRow {
  name: string;
  type: string;
  target_stream: string;
  status: string;
  listen_host: string;
  tcp_port: number;
  bound_port: number | null;
  settings: string;
  comment: string;
  started_at: string | null;
  docs_accepted: number;
  docs_rejected: number;
  bytes_received: number;
  requests: number;
  bulk_requests: number;
  failed_requests: number;
  last_error: string | null;
  last_error_at: string | null;
}

async function showInputs(): Promise<InputRow[]> {
  const r = await h.call('POST', '/v1beta2/exec', { body: { sql: 'SHOW INPUTS', type: 'historical' } });
  assert.equal(r.statusCode, 200, r.body);
  const { columns, data } = r.json() as { columns: { name: string }[]; data: unknown[][] };
  return data.map(
    (row) => Object.fromEntries(columns.map((c, i) => [c.name, row[i]])) as unknown as InputRow,
  );
}

async function inputRow(name: string): Promise<InputRow | undefined> {
  return (await showInputs()).find((r) => r.name === name);
}

const USER = 'shipper';
const PASSWORD = "s3cret'pass";

describe('CREATE INPUT ... type=elastic through the API, end to end', () => {
  let port: number;
  let node: string;
  let client: Client;

  before(async () => {
    h = await startHarness();
    port = await freePort();
    node = `http://127.0.0.1:${port}`;
    await ok('CREATE STREAM logs (_raw string, _index string, _id string)');
    await ok(
      `CREATE INPUT logs_in SETTINGS type='elastic', target_stream='logs', tcp_port=${port}, ` +
        `listen_host='127.0.0.1', username='${USER}', password='s3cret\\'pass', es_version='8.15.0' ` +
        "COMMENT 'from filebeat'",
    );
    client = new Client({ node, auth: { username: USER, password: PASSWORD }, compression: true });
  });

  after(async () => {
    await client.close();
    await h.close();
  });

  test('SHOW INPUTS lists it running on its port, password masked; SHOW CREATE INPUT masks it too', async () => {
    const row = await inputRow('logs_in');
    assert.ok(row);
    assert.equal(row.status, 'running');
    assert.equal(row.type, 'elastic');
    assert.equal(row.target_stream, 'logs');
    assert.equal(row.tcp_port, port);
    assert.equal(row.bound_port, port);
    assert.equal(row.comment, 'from filebeat');
    assert.match(row.settings, /password='\*\*\*\*\*\*'/);
    assert.match(row.settings, /username='shipper'/);
    assert.ok(!row.settings.includes('s3cret'));
    const [[statement]] = (await rows('SHOW CREATE INPUT logs_in')) as [[string]];
    assert.equal(
      statement,
      `CREATE INPUT logs_in SETTINGS type='elastic', target_stream='logs', tcp_port=${port}, ` +
        "listen_host='127.0.0.1', username='shipper', password='******', es_version='8.15.0', " +
        "max_body_bytes=104857600 COMMENT 'from filebeat'",
    );
    const info = await client.info();
    assert.equal(info.version.number, '8.15.0');
  });

  test('the bulk helper (gzip) writes every document into the stream with _raw, _index, _id', async () => {
    const docs = Array.from({ length: 2500 }, (_, i) => ({
      '@timestamp': new Date(1_700_000_000_000 + i).toISOString(),
      message: `GET /items/${i} 200 host=web-${i % 7} ${'pad '.repeat(10)}`,
      i,
    }));
    const result = await client.helpers.bulk({
      datasource: docs,
      onDocument: (doc) =>
        doc.i % 2 === 0
          ? { create: { _index: 'helper' } }
          : { index: { _index: 'helper', _id: `h${doc.i}` } },
      flushBytes: 64 * 1024,
      concurrency: 3,
    });
    assert.equal(result.successful, 2500);
    assert.equal(result.failed, 0);
    const [[count, distinctIds, distinctRaw]] = (await rows(
      "SELECT count(), uniq_exact(_id), uniq_exact(_raw) FROM table(logs) WHERE _index = 'helper'",
    )) as [[number, number, number]];
    assert.deepEqual([Number(count), Number(distinctIds), Number(distinctRaw)], [2500, 2500, 2500]);
    const [[raw, id]] = (await rows(
      "SELECT _raw, _id FROM table(logs) WHERE _index = 'helper' AND _id = 'h7'",
    )) as [[string, string]];
    assert.equal(id, 'h7');
    assert.equal(raw, JSON.stringify(docs[7]));
    // Generated ids are 20 characters; the test's own are `h<i>` (a generated id may start with
    // `h` too: its first characters are the listener's random generator id).
    const generated = (await rows(
      "SELECT _id FROM table(logs) WHERE _index = 'helper' AND length(_id) = 20 LIMIT 5",
    )) as [[string]][];
    assert.equal(generated.length, 5);
    for (const [g] of generated) assert.match(g as unknown as string, /^[A-Za-z0-9_-]{20}$/);
  });

  test('plain bulk: index, create, update, delete rows, in request order with contiguous _tp_sn', async () => {
    const response = await client.bulk({
      operations: [
        { index: { _index: 'plain', _id: 'p1' } },
        { msg: 'one', n: 1.5 },
        { create: { _index: 'plain', _id: 'p2' } },
        { msg: 'two' },
        { update: { _index: 'plain', _id: 'p1' } },
        { doc: { n: 2 } },
        { delete: { _index: 'plain', _id: 'p2' } },
      ],
    });
    assert.equal(response.errors, false);
    const got = await rows(
      "SELECT _raw, _index, _id, _tp_sn FROM table(logs) WHERE _index = 'plain' ORDER BY _tp_sn",
    );
    assert.deepEqual(
      got.map((r) => r.slice(0, 3)),
      [
        ['{"msg":"one","n":1.5}', 'plain', 'p1'],
        ['{"msg":"two"}', 'plain', 'p2'],
        ['{"doc":{"n":2}}', 'plain', 'p1'],
        ['', 'plain', 'p2'],
      ],
    );
    const sns = got.map((r) => Number(r[3]));
    assert.deepEqual(
      sns,
      [sns[0]!, sns[0]! + 1, sns[0]! + 2, sns[0]! + 3],
      'one request, one contiguous range',
    );
  });

  test('a streaming SELECT over SSE sees bulk documents arrive', async () => {
    const base = `${await h.trb.listen()}/default/api`;
    const ac = new AbortController();
    const r = await fetch(`${base}/v1beta2/queries`, {
      method: 'POST',
      headers: { ...authHeader(ADMIN), 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        sql: 'SELECT _raw, _index, _id FROM logs',
        batching_policy: { count: 100, time_ms: 50 },
      }),
      signal: ac.signal,
    });
    assert.equal(r.status, 200);
    const events = readSse(r.body!);
    const first = (await events.next()).value!;
    assert.equal(first.event, 'query');
    assert.equal(JSON.parse(first.data).status, 'running');
    const seen = new Set<string>();
    const reader = (async () => {
      for await (const e of events) {
        if (e.event !== 'message') continue;
        for (const [, index, id] of JSON.parse(e.data) as [string, string, string][])
          if (index === 'live' || index === 'probe') seen.add(`${index}/${id}`);
        if ([...seen].filter((k) => k.startsWith('live/')).length === 50) return;
      }
    })();
    // The subscription starts with the query: probe until one document comes through, then send
    // the real batch and expect every one of its documents.
    for (let i = 0; i < 100 && ![...seen].some((k) => k.startsWith('probe/')); i++) {
      await client.bulk({ operations: [{ index: { _index: 'probe', _id: `probe${i}` } }, { probe: i }] });
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.ok(
      [...seen].some((k) => k.startsWith('probe/')),
      'a probe document arrived',
    );
    const operations = Array.from({ length: 50 }, (_, i) => [
      { create: { _index: 'live', _id: `l${i}` } },
      { live: i },
    ]).flat();
    assert.equal((await client.bulk({ operations })).errors, false);
    const timeout = setTimeout(() => ac.abort(), 30_000);
    await reader.catch(() => undefined);
    clearTimeout(timeout);
    ac.abort();
    for (let i = 0; i < 50; i++) assert.ok(seen.has(`live/l${i}`), `live/l${i} arrived`);
  });

  test('wrong credentials are refused (401) and counted; the stream gets nothing', async () => {
    const other = new Client({ node, auth: { username: USER, password: 'wrong' }, compression: true });
    await assert.rejects(
      other.bulk({ operations: [{ index: { _index: 'nope' } }, { a: 1 }] }),
      (e: unknown) => {
        assert.ok(e instanceof errors.ResponseError);
        assert.equal(e.statusCode, 401);
        return true;
      },
    );
    await other.close();
    const [[n]] = (await rows("SELECT count() FROM table(logs) WHERE _index = 'nope'")) as [[number]];
    assert.equal(Number(n), 0);
    const row = await inputRow('logs_in');
    assert.ok(row!.failed_requests >= 1);
    assert.match(row!.last_error ?? '', /401 security_exception/);
  });

  test('SHOW INPUTS counters: accepted, rejected, bytes, requests, last error', async () => {
    const p = await freePort();
    await ok('CREATE STREAM counted (_raw string, _index string, _id string)');
    await ok(
      `CREATE INPUT counted_in SETTINGS type='elastic', target_stream='counted', tcp_port=${p}, listen_host='127.0.0.1'`,
    );
    const body =
      '{"index":{"_index":"c"}}\n{"a":1}\n{"index":{"_index":"c"}}\nnot a document\n{"create":{"_index":"c","_id":"x"}}\n{"b":2}\n';
    const res = await fetch(`http://127.0.0.1:${p}/_bulk`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body,
    });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { errors: boolean }).errors, true);
    await (await fetch(`http://127.0.0.1:${p}/`)).text();
    const row = await inputRow('counted_in');
    assert.deepEqual(
      {
        docs_accepted: row!.docs_accepted,
        docs_rejected: row!.docs_rejected,
        bytes_received: row!.bytes_received,
        requests: row!.requests,
        bulk_requests: row!.bulk_requests,
        failed_requests: row!.failed_requests,
      },
      {
        docs_accepted: 2,
        docs_rejected: 1,
        bytes_received: Buffer.byteLength(body),
        requests: 2,
        bulk_requests: 1,
        failed_requests: 0,
      },
    );
    assert.match(row!.last_error ?? '', /document_parsing_exception/);
    assert.ok(row!.last_error_at);
    const [[n]] = (await rows('SELECT count() FROM table(counted)')) as [[number]];
    assert.equal(Number(n), 2);
    await ok('DROP INPUT counted_in');
    await ok('DROP STREAM counted');
  });

  test('the target stream must exist', async () => {
    const p = await freePort();
    const message = await fails(
      `CREATE INPUT ghost_in SETTINGS type='elastic', target_stream='ghost', tcp_port=${p}, listen_host='127.0.0.1'`,
      'INPUT_BAD_TARGET',
    );
    assert.match(message, /target stream ghost does not exist/);
    assert.match(message, /CREATE STREAM ghost \(_raw string, _index string, _id string\)/);
    assert.equal(await inputRow('ghost_in'), undefined);
    await assert.rejects(fetch(`http://127.0.0.1:${p}/`), 'nothing listens');
  });

  test('a target stream with another schema is refused with the schema expected', async () => {
    const p = await freePort();
    await ok('CREATE STREAM wrong_a (_raw string, _index string)');
    await ok('CREATE STREAM wrong_b (_raw string, _index string, _id int64)');
    await ok('CREATE STREAM wrong_c (_raw string, _index string, _id string, level string)');
    await ok('CREATE DATABASE other');
    await ok('CREATE STREAM other.wrong_d (message string)');
    const cases: Array<[string, RegExp]> = [
      ['wrong_a', /column _id is missing/],
      ['wrong_b', /column _id is int64, not string/],
      ['wrong_c', /column level has no DEFAULT/],
      [
        'other.wrong_d',
        /column _raw is missing.*CREATE STREAM other\.wrong_d \(_raw string, _index string, _id string\)/,
      ],
    ];
    for (const [target, why] of cases) {
      const message = await fails(
        `CREATE INPUT bad_in SETTINGS type='elastic', target_stream='${target}', tcp_port=${p}, listen_host='127.0.0.1'`,
        'INPUT_BAD_TARGET',
      );
      assert.match(message, why);
      assert.match(message, /exactly the columns _raw string, _index string, _id string/);
    }
    assert.equal(await inputRow('bad_in'), undefined);
    for (const s of ['wrong_a', 'wrong_b', 'wrong_c', 'other.wrong_d']) await ok(`DROP STREAM ${s}`);
  });

  test('extra columns with a DEFAULT are allowed and computed from the row', async () => {
    const p = await freePort();
    await ok(
      'CREATE STREAM derived (_raw string, _index string, _id string, raw_length uint64 DEFAULT length(_raw), ' +
        "level string DEFAULT json_extract_string(_raw, 'level'))",
    );
    await ok(
      `CREATE INPUT derived_in SETTINGS type='elastic', target_stream='derived', tcp_port=${p}, listen_host='127.0.0.1'`,
    );
    const c = new Client({ node: `http://127.0.0.1:${p}`, compression: true });
    await c.bulk({ operations: [{ index: { _index: 'd', _id: '1' } }, { level: 'warn' }] });
    await c.close();
    const got = await rows('SELECT _raw, raw_length, level FROM table(derived)');
    assert.deepEqual(
      got.map((r) => [r[0], Number(r[1]), r[2]]),
      [['{"level":"warn"}', 16, 'warn']],
    );
    await ok('DROP INPUT derived_in');
    await ok('DROP STREAM derived');
  });

  test('a port in use fails the CREATE with INPUT_PORT_IN_USE and leaves nothing behind', async () => {
    const p = await freePort();
    const blocker = await occupy(p);
    try {
      const message = await fails(
        `CREATE INPUT busy_in SETTINGS type='elastic', target_stream='logs', tcp_port=${p}, listen_host='127.0.0.1'`,
        'INPUT_PORT_IN_USE',
      );
      assert.match(message, new RegExp(`127\\.0\\.0\\.1:${p}`));
      assert.equal(await inputRow('busy_in'), undefined);
      await fails('SHOW CREATE INPUT busy_in', 'RESOURCE_NOT_FOUND');
      const topology = (await h.call('GET', '/v1beta2/topology')).json() as { nodes: { name: string }[] };
      assert.ok(!topology.nodes.some((n) => n.name === 'busy_in'));
    } finally {
      await new Promise((r) => blocker.close(r));
    }
    // The same statement works once the port is free: nothing of the first attempt was kept.
    await ok(
      `CREATE INPUT busy_in SETTINGS type='elastic', target_stream='logs', tcp_port=${p}, listen_host='127.0.0.1'`,
    );
    await ok('DROP INPUT busy_in');
  });

  test('bad settings name the setting; an existing name is refused unless IF NOT EXISTS', async () => {
    const p = await freePort();
    const head = `CREATE INPUT bad_settings SETTINGS type='elastic', target_stream='logs'`;
    assert.match(
      await fails(`${head}, tcp_prot=${p}`, 'INPUT_UNKNOWN_SETTING'),
      /tcp_prot.*did you mean tcp_port/,
    );
    assert.match(await fails(`${head}, tcp_port=70000`, 'INPUT_BAD_SETTING'), /tcp_port must be an integer/);
    assert.match(await fails(`${head}, es_version='6.8.0'`, 'INPUT_BAD_SETTING'), /es_version/);
    assert.match(await fails(`${head}, username='u'`, 'INPUT_MISSING_SETTING'), /password/);
    assert.match(
      await fails(
        `CREATE INPUT bad_settings SETTINGS type='elastic', tcp_port=${p}`,
        'INPUT_MISSING_SETTING',
      ),
      /target_stream/,
    );
    assert.match(
      await fails(
        `CREATE INPUT bad_settings SETTINGS type='kafka', target_stream='logs'`,
        'INPUT_UNKNOWN_TYPE',
      ),
      /kafka/,
    );
    assert.equal(await inputRow('bad_settings'), undefined);
    await fails(
      `CREATE INPUT logs_in SETTINGS type='elastic', target_stream='logs', tcp_port=${p}, listen_host='127.0.0.1'`,
      'RESOURCE_ALREADY_EXISTS',
    );
    await ok(
      `CREATE INPUT IF NOT EXISTS logs_in SETTINGS type='elastic', target_stream='logs', tcp_port=${p}, listen_host='127.0.0.1'`,
    );
    assert.equal((await inputRow('logs_in'))!.bound_port, port, 'the existing input is unchanged');
  });

  test('the target stream cannot be dropped while an input writes into it', async () => {
    const p = await freePort();
    await ok('CREATE STREAM guarded (_raw string, _index string, _id string)');
    await ok(
      `CREATE INPUT guard_in SETTINGS type='elastic', target_stream='guarded', tcp_port=${p}, listen_host='127.0.0.1'`,
    );
    assert.match(await fails('DROP STREAM guarded', 'RESOURCE_IN_USE'), /guarded is used by input guard_in/);
    const del = await h.call('DELETE', '/v1beta2/streams/guarded');
    assert.equal(del.statusCode, 409);
    assert.match((del.json() as { message: string }).message, /input guard_in/);
    assert.ok((await rows('SHOW STREAMS')).some(([n]) => n === 'guarded'));
    await ok('DROP INPUT guard_in');
    await ok('DROP STREAM guarded');
    // A target in another database (db.stream): DROP DATABASE is refused too.
    await ok('CREATE DATABASE shipping');
    await ok('CREATE STREAM shipping.events (_raw string, _index string, _id string)');
    await ok(
      `CREATE INPUT shipping_in SETTINGS type='elastic', target_stream='shipping.events', tcp_port=${p}, listen_host='127.0.0.1'`,
    );
    const c = new Client({ node: `http://127.0.0.1:${p}`, compression: true });
    await c.bulk({ operations: [{ index: { _index: 'e', _id: '1' } }, { shipped: true }] });
    await c.close();
    assert.deepEqual(await rows('SELECT _raw, _id FROM table(shipping.events)'), [['{"shipped":true}', '1']]);
    assert.match(
      await fails('DROP DATABASE shipping', 'RESOURCE_IN_USE'),
      /shipping\.events is used by input shipping_in/,
    );
    assert.match(await fails('DROP STREAM shipping.events', 'RESOURCE_IN_USE'), /input shipping_in/);
    const shown = (await rows('SHOW INPUTS FROM shipping')) as string[][];
    assert.deepEqual(
      shown.map((r) => r[0]),
      ['shipping_in'],
    );
    await ok('DROP INPUT shipping_in');
    await ok('DROP DATABASE shipping');
  });

  test('DROP INPUT stops the listener and forgets the input', async () => {
    const p = await freePort();
    await ok(
      `CREATE INPUT drop_in SETTINGS type='elastic', target_stream='logs', tcp_port=${p}, listen_host='127.0.0.1'`,
    );
    const res = await fetch(`http://127.0.0.1:${p}/`);
    assert.equal(res.headers.get('x-elastic-product'), 'Elasticsearch');
    await res.text();
    await ok('DROP INPUT drop_in');
    await assert.rejects(fetch(`http://127.0.0.1:${p}/`), 'the port is closed');
    assert.equal(await inputRow('drop_in'), undefined);
    await fails('DROP INPUT drop_in', 'RESOURCE_NOT_FOUND');
    await fails('SHOW CREATE INPUT drop_in', 'RESOURCE_NOT_FOUND');
    await ok('DROP INPUT IF EXISTS drop_in');
    // The port is free again.
    const s = await occupy(p);
    await new Promise((r) => s.close(r));
  });

  test('GET /v1beta2/topology: the input, its counters and the edge to its stream; db filters', async () => {
    const r = await h.call('GET', '/v1beta2/topology');
    assert.equal(r.statusCode, 200);
    const t = r.json() as {
      nodes: {
        db: string;
        id: string;
        name: string;
        type: string;
        ownership: { name: string };
        properties: Record<string, unknown>;
      }[];
      edges: { source: string; target: string }[];
      dependencies: { source: string; target: string }[];
    };
    const input = t.nodes.find((n) => n.type === 'input' && n.name === 'logs_in')!;
    const stream = t.nodes.find((n) => n.type === 'stream' && n.name === 'logs')!;
    assert.ok(input && stream);
    assert.equal(input.db, 'default');
    assert.equal(input.ownership.name, 'admin');
    assert.equal(input.properties.status, 'running');
    assert.equal(input.properties.bound_port, port);
    assert.ok((input.properties.docs_accepted as number) >= 2504);
    assert.ok(!JSON.stringify(input).includes('s3cret'), 'no password in the topology');
    assert.deepEqual(
      t.edges.filter((e) => e.source === input.id),
      [{ source: input.id, target: stream.id }],
    );
    assert.deepEqual(
      t.dependencies.filter((e) => e.source === input.id),
      [{ source: input.id, target: stream.id }],
    );
    const other = (await h.call('GET', '/v1beta2/topology?db=other')).json() as typeof t;
    assert.ok(!other.nodes.some((n) => n.name === 'logs_in' || n.name === 'logs'));
  });

  test('after a restart the input listens on its port again and still writes; a taken port shows failed', async () => {
    const p2 = await freePort();
    await ok(
      `CREATE INPUT blocked_in SETTINGS type='elastic', target_stream='logs', tcp_port=${p2}, listen_host='127.0.0.1'`,
    );
    const [[before]] = (await rows('SELECT count() FROM table(logs)')) as [[number]];
    await client.close();
    const dataDir = h.dataDir;
    await h.stop();
    const blocker = await occupy(p2);
    try {
      h = await startHarness({ dataDir });
      const row = await inputRow('logs_in');
      assert.equal(row!.status, 'running');
      assert.equal(row!.bound_port, port);
      const blocked = await inputRow('blocked_in');
      assert.equal(blocked!.status, 'failed');
      assert.equal(blocked!.bound_port, null);
      assert.match(blocked!.last_error ?? '', /already in use/);
      client = new Client({ node, auth: { username: USER, password: PASSWORD }, compression: true });
      const response = await client.bulk({
        operations: [{ create: { _index: 'after-restart', _id: 'r1' } }, { after: 'restart' }],
      });
      assert.equal(response.errors, false);
      const [[after, raw]] = (await rows(
        "SELECT (SELECT count() FROM table(logs)), any(_raw) FROM table(logs) WHERE _index = 'after-restart'",
      )) as [[number, string]];
      assert.equal(Number(after), Number(before) + 1);
      assert.equal(raw, '{"after":"restart"}');
      await ok('DROP INPUT blocked_in');
      assert.equal(await inputRow('blocked_in'), undefined);
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });
});
