/**
 * Requests over a limit, and requests Node's HTTP parser refuses, answer a 4xx with the
 * `{code, message, system}` body naming the limit: body size (413), decoded gzip size (413, a gzip
 * bomb stops at the limit), headers (431), URL (414), a URL that does not decode (400), bytes that
 * are no HTTP (400). Empty ingest bodies answer 200 and say they wrote 0 rows.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { BODY_LIMIT, DECODED_BODY_LIMIT, HEADER_LIMIT } from '../../src/api/request-limits.ts';
import { ROWS_WRITTEN_HEADER } from '../../src/api/routes/streams.ts';
import { ERRORS } from '../../src/errors/catalogue.ts';
import { ADMIN, authHeader, type Harness, startHarness } from '../helpers/harness.ts';
import { count, createStream, ingestRaw } from '../helpers/streams.ts';

let h: Harness;
let port: number;

before(async () => {
  h = await startHarness();
  await h.trb.api.listen({ port: 0, host: '127.0.0.1' });
  port = (h.trb.api.server.address() as { port: number }).port;
  await createStream(h, { name: 'lim', columns: [{ name: 'a', type: 'int64' }] });
  await createStream(h, { name: 'lim_raw', columns: [{ name: 'raw', type: 'string' }] });
});

after(() => h.close());

interface Answer {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** One request over a real socket (limits of Node's parser never reach `inject`). */
function send(path: string, headers: Record<string, string>, method = 'GET', body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const r = request({
      host: '127.0.0.1',
      port,
      path,
      method,
      headers: { ...authHeader(ADMIN), ...headers },
    });
    r.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body: text }),
      );
    });
    r.on('error', reject);
    r.end(body);
  });
}

/** Raw bytes on a socket; answers everything the server wrote before closing. */
function sendRaw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.end(bytes));
    let text = '';
    s.setEncoding('utf8');
    s.on('data', (c: string) => {
      text += c;
    });
    s.on('close', () => resolve(text));
    s.on('error', reject);
  });
}

function assertJsonError(a: Answer, status: number, code: number, message: RegExp): void {
  assert.equal(a.status, status, a.body);
  assert.match(a.contentType ?? '', /^application\/json/);
  const e = JSON.parse(a.body) as { code: number; message: string; system: string };
  assert.deepEqual(Object.keys(e).sort(), ['code', 'message', 'system']);
  assert.equal(e.code, code, a.body);
  assert.match(e.message, message);
}

test('a body over the limit: 413 naming the limit in bytes and what to do', async () => {
  const a = await send(
    '/default/api/v1beta2/streams/lim/ingest',
    { 'content-type': 'application/json', 'content-length': String(BODY_LIMIT + 1) },
    'POST',
    '{',
  ).catch((e: Error) => ({ status: -1, contentType: undefined, body: e.message }));
  assertJsonError(a, 413, ERRORS.BODY_TOO_LARGE.code, new RegExp(`limit of ${BODY_LIMIT} bytes; send`));
});

test('a gzip bomb: 413 naming the decoded-size limit, nothing written', async () => {
  // Gzip members concatenated decode as one stream: 1 MiB of zeros, repeated past the limit.
  const member = gzipSync(Buffer.alloc(1024 * 1024));
  const bomb = Buffer.concat(Array.from({ length: DECODED_BODY_LIMIT / (1024 * 1024) + 1 }, () => member));
  assert.ok(bomb.length < 2 * 1024 * 1024);
  const before = await count(h, 'lim');
  const r = await ingestRaw(h, 'lim', bomb, 'application/x-ndjson', {
    headers: { 'content-encoding': 'gzip' },
  });
  assert.equal(r.statusCode, 413, r.body);
  const e = r.json() as { code: number; message: string };
  assert.equal(e.code, ERRORS.DECODED_BODY_TOO_LARGE.code);
  assert.match(
    e.message,
    new RegExp(`decoded from gzip is larger than the limit of ${DECODED_BODY_LIMIT} bytes`),
  );
  assert.equal(await count(h, 'lim'), before);
  // A truncated gzip body is malformed (400), and a good one is decoded.
  const good = gzipSync(Buffer.from('{"a":1}\n{"a":2}\n'));
  const cut = await ingestRaw(h, 'lim', good.subarray(0, good.length - 6), 'application/x-ndjson', {
    headers: { 'content-encoding': 'gzip' },
  });
  assert.equal(cut.statusCode, 400, cut.body);
  assert.equal((cut.json() as { code: number }).code, ERRORS.INGEST_MALFORMED.code);
  const ok = await ingestRaw(h, 'lim', good, 'application/x-ndjson', {
    headers: { 'content-encoding': 'gzip' },
  });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(ok.headers[ROWS_WRITTEN_HEADER], '2');
});

test('headers over the limit: 431 as {code, message, system}', async () => {
  const a = await send('/default/api/info', { 'x-big': 'a'.repeat(HEADER_LIMIT + 100) });
  assertJsonError(a, 431, ERRORS.HEADERS_TOO_LARGE.code, new RegExp(`limit of ${HEADER_LIMIT} bytes`));
});

test('a URL over the limit: 414 as {code, message, system}; a path segment too long too', async () => {
  const a = await send(`/default/api/v1beta2/streams?db=${'a'.repeat(HEADER_LIMIT + 100)}`, {});
  assertJsonError(a, 414, ERRORS.URL_TOO_LONG.code, /request line is longer than the limit/);
  const b = await send(`/default/api/v1beta2/streams/${'a'.repeat(2000)}`, {});
  assertJsonError(b, 414, ERRORS.URL_TOO_LONG.code, /path segment is longer than the limit of 1024/);
});

test('a URL that does not decode and bytes that are no HTTP: 400 as {code, message, system}', async () => {
  const a = await send('/default/api/v1beta2/streams/%ZZ', {});
  assertJsonError(a, 400, ERRORS.INVALID_REQUEST.code, /URL is not valid/);
  const raw = await sendRaw('BLAH / HTTP/1.1\r\n\r\n');
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  assert.match(head, /^HTTP\/1\.1 400 /);
  assert.match(head, /content-type: application\/json/i);
  const e = JSON.parse(body) as { code: number; message: string; system: string };
  assert.equal(e.code, ERRORS.INVALID_REQUEST.code);
  assert.match(e.message, /malformed/);
  // The server still serves requests afterwards.
  assert.equal((await send('/default/api/info', {})).status, 200);
});

test('empty ingest bodies in every format answer 200 and say 0 rows were written', async () => {
  const cases: Array<[string, string, string]> = [
    ['lim', '{"columns":["a"],"data":[]}', 'application/json'],
    ['lim', '', 'application/x-ndjson'],
    ['lim', ' \n\n ', 'application/x-ndjson'],
    ['lim_raw', '', 'text/plain'],
    ['lim_raw', '', 'text/plain;format=lines'],
    ['lim_raw', '\n\n', 'text/plain;format=lines'],
  ];
  for (const [stream, body, type] of cases) {
    const before = await count(h, stream);
    const r = await ingestRaw(h, stream, body, type);
    assert.equal(r.statusCode, 200, `${type} ${JSON.stringify(body)}: ${r.body}`);
    assert.equal(r.body, '');
    assert.equal(r.headers[ROWS_WRITTEN_HEADER], '0', `${type} ${JSON.stringify(body)}`);
    assert.equal(await count(h, stream), before);
  }
  const r = await ingestRaw(h, 'lim', '{"a":1}\n{"a":2}\n{"a":3}', 'application/x-ndjson', {
    headers: { 'x-timeplus-idempotent-id': 'limits-1' },
  });
  assert.equal(r.headers[ROWS_WRITTEN_HEADER], '3');
  const again = await ingestRaw(h, 'lim', '{"a":1}\n{"a":2}\n{"a":3}', 'application/x-ndjson', {
    headers: { 'x-timeplus-idempotent-id': 'limits-1' },
  });
  assert.equal(again.statusCode, 200);
  assert.equal(again.headers[ROWS_WRITTEN_HEADER], '0');
});
