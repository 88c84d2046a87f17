import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CommittedRange } from '../../src/stream/committed-range-notifier.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { count, createStream, ingestRaw, rows } from '../helpers/streams.ts';

let h: Harness;
const COLS = [
  { name: 'req', type: 'int32' },
  { name: 'k', type: 'int32' },
];

before(async () => {
  h = await startHarness();
  for (const name of ['idem', 'busy', 'internal']) await createStream(h, { name, columns: COLS });
});

after(() => h.close());

function body(req: number, n: number): string {
  return JSON.stringify({ columns: ['req', 'k'], data: Array.from({ length: n }, (_, k) => [req, k]) });
}

test('a retried request with the same x-timeplus-idempotent-id writes nothing twice', async () => {
  const send = (id: string, req: number) =>
    ingestRaw(h, 'idem', body(req, 3), 'application/json', { headers: { 'x-timeplus-idempotent-id': id } });
  for (const r of [await send('id-1', 1), await send('id-1', 1), await send('id-1', 1)])
    assert.equal(r.statusCode, 200, r.body);
  assert.equal(await count(h, 'idem'), 3);
  // The same id arriving concurrently is written once too.
  const burst = await Promise.all(Array.from({ length: 5 }, () => send('id-2', 2)));
  for (const r of burst) assert.equal(r.statusCode, 200, r.body);
  assert.equal(await count(h, 'idem'), 6);
  // A different id (or none) writes again.
  assert.equal((await send('id-3', 1)).statusCode, 200);
  assert.equal((await ingestRaw(h, 'idem', body(1, 3), 'application/json')).statusCode, 200);
  assert.equal(await count(h, 'idem'), 12);
  // Ids are per stream.
  assert.equal(
    (
      await ingestRaw(h, 'busy', body(9, 1), 'application/json', {
        headers: { 'x-timeplus-idempotent-id': 'id-1' },
      })
    ).statusCode,
    200,
  );
  assert.equal(await count(h, 'busy'), 1);
});

test('a failed request does not burn its idempotency id', async () => {
  const headers = { 'x-timeplus-idempotent-id': 'retry-after-fix' };
  const bad = await ingestRaw(h, 'idem', '{"columns":["req","k"],"data":[[1,"x"]]}', 'application/json', {
    headers,
  });
  assert.equal(bad.statusCode, 400);
  const good = await ingestRaw(h, 'idem', body(7, 2), 'application/json', { headers });
  assert.equal(good.statusCode, 200, good.body);
  assert.equal((await rows(h, 'SELECT count() FROM default.idem WHERE req = 7'))[0]?.[0], 2);
});

test('concurrent requests: contiguous sequence numbers from 0, every row once, ranges published in order', async () => {
  const ranges: CommittedRange[] = [];
  const unsubscribe = h.trb.services.streams.subscribe('default', 'busy', (r) => ranges.push(r));
  const start = h.trb.services.streams.committedSn('default', 'busy') + 1;
  const requests = 60;
  const results = await Promise.all(
    Array.from({ length: requests }, (_, i) =>
      i % 2 === 0
        ? ingestRaw(h, 'busy', body(100 + i, 50), 'application/json')
        : ingestRaw(
            h,
            'busy',
            Array.from({ length: 50 }, (_, k) => JSON.stringify({ req: 100 + i, k })).join('\n'),
            'application/x-ndjson',
          ),
    ),
  );
  unsubscribe();
  for (const r of results) assert.equal(r.statusCode, 200, r.body);
  const got = (await rows(
    h,
    'SELECT req, k, toString(_tp_sn) FROM default.busy WHERE req >= 100 ORDER BY _tp_sn',
  )) as Array<[number, number, string]>;
  assert.equal(got.length, requests * 50);
  assert.deepEqual(
    got.map((r) => Number(r[2])),
    Array.from({ length: requests * 50 }, (_, i) => start + i),
  );
  // Each request's rows landed once and together (a request is never split).
  const perRequest = new Map<number, number[]>();
  got.forEach(([req], i) => {
    const list = perRequest.get(req) ?? [];
    list.push(i);
    perRequest.set(req, list);
  });
  assert.equal(perRequest.size, requests);
  for (const [req, idx] of perRequest) {
    assert.equal(idx.length, 50, `request ${req}`);
    assert.equal((idx.at(-1) as number) - (idx[0] as number), 49, `request ${req} is contiguous`);
  }
  // The notifier saw exactly these ranges, in order, without gaps.
  assert.equal(ranges[0]?.fromSn, start);
  for (let i = 1; i < ranges.length; i++)
    assert.equal(ranges[i]?.fromSn, (ranges[i - 1]?.toSn as number) + 1);
  assert.equal(ranges.at(-1)?.toSn, start + requests * 50 - 1);
  assert.ok(ranges.length < requests, `group commit: ${ranges.length} commits for ${requests} requests`);
  assert.equal(h.trb.services.streams.committedSn('default', 'busy'), start + requests * 50 - 1);
});

test('a committed range can be read back at once with the range SQL', async () => {
  const streams = h.trb.services.streams;
  const got: unknown[][][] = [];
  const done = new Promise<void>((resolve) => {
    const off = streams.subscribe('default', 'busy', (range) => {
      off();
      void rows(
        h,
        `SELECT req, k FROM default.busy WHERE _tp_sn > ${range.fromSn - 1} AND _tp_sn <= ${range.toSn} ORDER BY _tp_sn`,
      ).then((r) => {
        got.push(r);
        resolve();
      });
    });
  });
  assert.equal((await ingestRaw(h, 'busy', body(555, 2), 'application/json')).statusCode, 200);
  await done;
  assert.deepEqual(got[0], [
    [555, 0],
    [555, 1],
  ]);
});

test('the in-process ingest API takes parsed rows (and JS values) through the same path', async () => {
  const streams = h.trb.services.streams;
  const r1 = await streams.ingest('default', 'internal', {
    columns: ['req', 'k'],
    rows: [
      [1, 1n],
      [2, 2],
    ],
  });
  assert.deepEqual(r1, { fromSn: 0, count: 2 });
  const r2 = await streams.ingest(
    'default',
    'internal',
    { objects: [{ req: 3 }, { req: 4, k: 4 }] },
    { idempotencyId: 'x' },
  );
  assert.deepEqual(r2, { fromSn: 2, count: 2 });
  const again = await streams.ingest(
    'default',
    'internal',
    { objects: [{ req: 3 }] },
    { idempotencyId: 'x' },
  );
  assert.equal(again.duplicate, true);
  await assert.rejects(
    streams.ingest('default', 'internal', { objects: [{ req: 5 }] }, { requiredColumns: ['k'] }),
    /Row 1: required column k is missing/,
  );
  await assert.rejects(
    streams.ingest('default', 'internal', { columns: ['req'], rows: [['x']] }),
    /Row 1, column req/,
  );
  await assert.rejects(
    streams.ingest('default', 'nope', { columns: ['req'], rows: [[1]] }),
    /Stream nope doesn't exist/,
  );
  assert.deepEqual(await rows(h, 'SELECT req, k FROM default.internal ORDER BY _tp_sn'), [
    [1, 1],
    [2, 2],
    [3, 0],
    [4, 4],
  ]);
});
