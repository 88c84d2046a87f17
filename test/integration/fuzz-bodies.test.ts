/**
 * Body fuzz: from a fixed seed, thousands of mutated request bodies (ingest in every format, stream
 * create and patch, query, SQL tool and user bodies) against a real in-process server. No answer may
 * be a 5xx, the server must keep serving, a body left valid must be accepted with its row count,
 * and at the end each stream holds exactly the rows the accepted requests said they wrote (a
 * rejected ingest wrote nothing). Header and URL limits go over a real socket.
 *
 * TRIBUTARY_FUZZ_SCALE multiplies the number of bodies (default 1: 2,000 bodies).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ROWS_WRITTEN_HEADER } from '../../src/api/routes/streams.ts';
import {
  createStreamRequest,
  FUZZ_COLUMNS,
  type FuzzRequest,
  ingestRequest,
  patchStreamRequest,
  queryRequest,
  Rng,
  rawIngestRequest,
  userRequest,
} from '../helpers/body-fuzz.ts';
import { ADMIN, authHeader, type Harness, startHarness } from '../helpers/harness.ts';
import { count, createStream } from '../helpers/streams.ts';

const SEED = 0x7a1b_0009;
const SCALE = Math.max(0.01, Number(process.env.TRIBUTARY_FUZZ_SCALE ?? '1') || 1);
const BODIES = Math.round(2000 * SCALE);
const CONCURRENCY = 8;

let h: Harness;

before(async () => {
  h = await startHarness();
  await createStream(h, { name: 'fz_all', columns: FUZZ_COLUMNS.map(({ name, type }) => ({ name, type })) });
  await createStream(h, { name: 'fz_raw', columns: [{ name: 'raw', type: 'string' }] });
  await createStream(h, { name: 'fz_rawint', columns: [{ name: 'raw', type: 'int64' }] });
  await createStream(h, {
    name: 'fz_patch',
    columns: [
      { name: 'a', type: 'int64' },
      { name: 't', type: 'datetime64(3)' },
    ],
  });
  const u = await h.call('POST', '/v1beta2/users', {
    body: { username: 'fz_user', password: 'fuzz-user-password', role: 'read_only' },
  });
  assert.equal(u.statusCode, 201, u.body);
});

after(() => h.close());

function generate(r: Rng, i: number): FuzzRequest {
  const p = r.next();
  if (p < 0.45) return ingestRequest(r, 'fz_all', '/v1beta2/streams/fz_all/ingest');
  if (p < 0.55) return rawIngestRequest(r, 'fz_raw', '/v1beta2/streams/fz_raw/ingest', false);
  if (p < 0.62) return rawIngestRequest(r, 'fz_rawint', '/v1beta2/streams/fz_rawint/ingest', true);
  if (p < 0.77) return createStreamRequest(r, `fz_c${i}`);
  if (p < 0.83) return patchStreamRequest(r, 'fz_patch');
  if (p < 0.96) return queryRequest(r);
  return userRequest(r, 'fz_user');
}

test(`${BODIES} mutated bodies: no 5xx, valid bodies accepted, rejected ingest writes nothing`, async () => {
  const r = new Rng(SEED);
  const written = new Map<string, number>();
  const statuses = new Map<number, number>();
  const failures: string[] = [];
  // Requests go CONCURRENCY at a time (as clients send them; concurrent ingests are committed
  // together). Each answer depends only on its own body, so the outcome is the same in any order.
  const requests = Array.from({ length: BODIES }, (_, i) => generate(r, i));
  for (let i = 0; i < BODIES && failures.length < 10; i += CONCURRENCY) {
    const batch = requests.slice(i, i + CONCURRENCY);
    const answers = await Promise.all(
      batch.map((req, k) =>
        answeredWithin(
          h.call(req.method, req.path, { body: req.body, headers: req.headers }),
          `#${i + k} ${req.method} ${req.path} (${req.what})`,
        ),
      ),
    );
    for (let k = 0; k < batch.length; k++)
      check(batch[k] as FuzzRequest, answers[k] as LightMyRequestResponse, i + k);
  }
  function check(req: FuzzRequest, res: LightMyRequestResponse, i: number): void {
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    const where = `#${i} ${req.method} ${req.path} (${req.what}): ${res.statusCode} ${res.body.slice(0, 300)}`;
    if (res.statusCode >= 500) failures.push(where);
    if (res.statusCode >= 400 && !/^application\/json/.test(String(res.headers['content-type']))) {
      failures.push(`not a JSON error: ${where}`);
    }
    if (req.ingest) {
      const n = res.statusCode === 200 ? Number(res.headers[ROWS_WRITTEN_HEADER]) : 0;
      if (res.statusCode === 200 && !Number.isInteger(n)) failures.push(`no rows-written header: ${where}`);
      if (req.ingest.rows !== undefined && (res.statusCode !== 200 || n !== req.ingest.rows)) {
        failures.push(`a valid body of ${req.ingest.rows} rows was answered ${n}: ${where}`);
      }
      written.set(req.ingest.stream, (written.get(req.ingest.stream) ?? 0) + n);
    }
  }
  assert.deepEqual(failures, [], failures.join('\n'));
  // Every kind of answer showed up: the fuzz reached both the accepting and the refusing paths.
  assert.ok((statuses.get(200) ?? 0) > BODIES / 10, JSON.stringify([...statuses]));
  assert.ok((statuses.get(400) ?? 0) > BODIES / 10, JSON.stringify([...statuses]));
  for (const stream of ['fz_all', 'fz_raw', 'fz_rawint']) {
    assert.equal(await count(h, stream), written.get(stream) ?? 0, `rows of ${stream}`);
  }
  assert.ok((written.get('fz_all') ?? 0) > 0);
  const info = await h.call('GET', '/info');
  assert.equal(info.statusCode, 200);
});

/**
 * `answer`, or a failure naming the request when it is not answered within a minute (instead of
 * the whole file's timeout, which names nothing), with where the server stood: the fuzzed
 * streams' write paths and what the engine was running.
 */
function answeredWithin<T>(answer: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within 60 s: ${what}\n${serverState()}`)), 60_000);
  });
  return Promise.race([answer, late]).finally(() => clearTimeout(timer));
}

function serverState(): string {
  const { streams, engine } = h.trb.services;
  const state: Record<string, unknown> = {};
  for (const name of ['fz_all', 'fz_raw', 'fz_rawint', 'fz_patch'])
    state[name] = streams.diagnostics('default', name);
  const activity = (engine as { activity?: () => unknown }).activity;
  if (activity) state.engine = activity.call(engine);
  return JSON.stringify(state, null, 1);
}

/** A request over a real socket: status and body (limits of Node's parser never reach inject). */
function socketRequest(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const port = (h.trb.api.server.address() as { port: number }).port;
    const req = request({ host: '127.0.0.1', port, path, headers: { ...authHeader(ADMIN), ...headers } });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('header and URL sizes around the limits over a real socket: 4xx JSON or success, never 5xx', async () => {
  await h.trb.api.listen({ port: 0, host: '127.0.0.1' });
  const r = new Rng(SEED + 1);
  for (let i = 0; i < Math.round(30 * SCALE); i++) {
    const size = r.pick([100, 8_000, 16_000, 16_400, 20_000, 60_000]);
    const kind = r.int(4);
    const headers: Record<string, string> = {};
    let path = '/default/api/v1beta2/streams';
    if (kind === 0) headers['x-fuzz'] = 'h'.repeat(size);
    else if (kind === 1) path += `?db=${'q'.repeat(size)}`;
    else if (kind === 2) path += `/${'n'.repeat(Math.min(size, 15_000))}`;
    else for (let k = 0; k < Math.min(size / 100, 300); k++) headers[`x-f${k}`] = 'v'.repeat(90);
    const res = await socketRequest(path, headers);
    assert.ok(res.status > 0 && res.status < 500, `${kind} ${size}: ${res.status} ${res.body.slice(0, 200)}`);
    if (res.status >= 400) {
      const e = JSON.parse(res.body) as { code: number; message: string; system: string };
      assert.equal(typeof e.code, 'number');
      assert.equal(typeof e.message, 'string');
    }
  }
  assert.equal((await socketRequest('/default/api/info', {})).status, 200);
});
