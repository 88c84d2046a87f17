/**
 * Remote user-defined functions against a real local HTTP server: batched POSTs of
 * `{"<arg>": [...]}` answered by `{"result": [...]}`, with and without an auth header; an
 * endpoint that is down, slow or answers garbage fails the query with a clear error.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { type Row, StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
let server: Server;
let base: string;
const requests: { path: string; headers: IncomingMessage['headers']; body: Record<string, unknown[]> }[] = [];

before(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => {
      text += c;
    });
    req.on('end', () => {
      const body = JSON.parse(text) as Record<string, unknown[]>;
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      if (req.url === '/slow') return void setTimeout(() => res.end('{"result":[]}'), 2000);
      if (req.url === '/garbage') return void res.end('<html>not json</html>');
      if (req.url === '/short') return void res.end('{"result":[1]}');
      if (req.url === '/secure' && req.headers['x-api-key'] !== 's3cret') {
        res.statusCode = 401;
        return void res.end('{"error":"unauthorized"}');
      }
      const ips = body.ip as string[];
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ result: ips.map((ip) => (ip.startsWith('10.') ? 'internal' : 'external')) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
  server.close();
});

async function historical(sql: string): Promise<{ rows: Row[]; error?: { code: number; message: string } }> {
  const r = await api.post('/v1beta2/queries', { sql });
  if (!String(r.headers.get('content-type')).startsWith('text/event-stream'))
    return { rows: [], error: (await r.json()) as { code: number; message: string } };
  const rows: Row[] = [];
  let error: { code: number; message: string } | undefined;
  for (const block of (await r.text()).split('\n\n')) {
    const lines = block.split('\n');
    const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
    const data = lines.find((l) => l.startsWith('data: '))?.slice(6);
    if (!data) continue;
    if (!event) rows.push(...(JSON.parse(data) as Row[]));
    else if (event === 'query') {
      const q = JSON.parse(data) as { status: string; error?: { code: number; message: string } };
      if (q.status === 'failed') error = q.error;
    }
  }
  return { rows, ...(error ? { error } : {}) };
}

test('a remote function is called in batches, without and with an auth header; the key is masked in GET', async () => {
  await api.exec(
    `CREATE REMOTE FUNCTION ip_kind(ip string) RETURNS string URL '${base}/open' AUTH_METHOD 'none'`,
  );
  requests.length = 0;
  const r = await historical(
    "SELECT ip_kind(ip) FROM (SELECT arrayJoin(['10.0.0.1', '8.8.8.8', '10.1.2.3']) AS ip)",
  );
  assert.deepEqual(r, { rows: [['internal'], ['external'], ['internal']] });
  assert.equal(requests.length, 1, 'one POST for the batch');
  assert.deepEqual(requests[0]?.body, { ip: ['10.0.0.1', '8.8.8.8', '10.1.2.3'] });

  await api.exec(
    `CREATE REMOTE FUNCTION ip_kind_secure(ip string) RETURNS string URL '${base}/secure' AUTH_METHOD 'auth_header' AUTH_HEADER 'x-api-key' AUTH_KEY 's3cret' EXECUTION_TIMEOUT 5000`,
  );
  assert.deepEqual(await historical("SELECT ip_kind_secure('10.9.9.9')"), { rows: [['internal']] });
  assert.equal(requests.at(-1)?.headers['x-api-key'], 's3cret');

  const got = (await (await api.get('/v1beta2/udfs/ip_kind_secure')).json()) as Record<string, unknown>;
  assert.equal(got.type, 'remote');
  assert.equal(got.url, `${base}/secure`);
  assert.equal(got.auth_method, 'auth_header');
  assert.deepEqual(got.auth_context, { auth_header: 'x-api-key', auth_value: '******' });
  assert.equal(got.execution_timeout, 5000);
  assert.ok(!JSON.stringify(await (await api.get('/v1beta2/udfs')).json()).includes('s3cret'));

  // A streaming tail calls it for every batch.
  const s = await api.createStream('remote_tail', '(ip string)');
  const q = await api.start(`SELECT ip, ip_kind(ip) FROM ${s}`);
  await api.ingest(s, ['ip'], [['10.0.0.7'], ['1.1.1.1']]);
  assert.deepEqual(await q.waitForRows(2), [
    ['10.0.0.7', 'internal'],
    ['1.1.1.1', 'external'],
  ]);
  await q.cancel();
});

test('a remote endpoint that refuses, is down, is slow or answers garbage fails the query clearly', async () => {
  const make = (name: string, url: string, extra = '') =>
    api.exec(
      `CREATE REMOTE FUNCTION ${name}(ip string) RETURNS string URL '${url}' AUTH_METHOD 'none'${extra}`,
    );
  await make('r_garbage', `${base}/garbage`);
  await make('r_short', `${base}/short`);
  await make('r_slow', `${base}/slow`, ' EXECUTION_TIMEOUT 300');
  await make('r_unauthorized', `${base}/secure`);
  // a port nothing listens on: the server's own, closed after being bound
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const downPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  await make('r_down', `http://127.0.0.1:${downPort}/`);
  const cases: [string, number, RegExp][] = [
    ["SELECT r_garbage('a')", 11101, /not JSON/],
    ["SELECT r_short(ip) FROM (SELECT arrayJoin(['a', 'b']) AS ip)", 11101, /with 2 values/],
    ["SELECT r_slow('a')", 159, /did not answer within 300 ms/],
    ["SELECT r_unauthorized('a')", 11101, /HTTP 401/],
    ["SELECT r_down('a')", 11101, /cannot reach/],
  ];
  for (const [sql, code, message] of cases) {
    const r = await historical(sql);
    assert.equal(r.error?.code, code, `${sql}: ${JSON.stringify(r)}`);
    assert.match(r.error?.message ?? '', message, sql);
  }
});
