/**
 * JavaScript aggregates beyond the plain fold: an aggregate with its own emit
 * (`has_customized_emit: true`, process() says how many results to emit and finalize() answers
 * them), substreams (`f(x) OVER (PARTITION BY k)`), and the argument checks Proton makes before
 * the call (type of each column argument; what an aggregate with its own emit may be combined with).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertSameRows, StreamingApi, type StreamingQuery } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
});

/**
 * Proton's test aggregate: a fall followed by a rise is one result (start price, time of the
 * bottom, end price, length of the fall); process() answers how many results wait to be emitted.
 */
const DIPS_SOURCE = `{
  has_customized_emit: true,
  initialize: function () { this.bottom = null; this.low = -1; this.start = -1; this.len = 1; this.result = []; },
  process: function (ts, price) {
    for (let i = 0; i < ts.length; i++) {
      if (this.start < 0 || (this.low < 0 && price[i] >= this.start)) { this.start = price[i]; this.bottom = ts[i]; this.len = 1; }
      else if ((this.low < 0 && price[i] < this.start) || price[i] < this.low) { this.low = price[i]; this.bottom = ts[i]; this.len++; }
      else if (price[i] > this.low) {
        this.result.push({ start_price: this.start, bottom_ts: this.bottom, end_price: price[i], down_duration: this.len });
        this.bottom = ts[i]; this.start = price[i]; this.low = -1; this.len = 1;
      } else this.len++;
    }
    return RETURNED;
  },
  finalize: function () { const r = this.result; this.result = []; return r; }
}`;

const dips = (name: string, returned = 'this.result.length') =>
  `CREATE AGGREGATE FUNCTION ${name}(ts datetime64(3), price float32)
   RETURNS tuple(start_price float32, bottom_ts datetime64(3), end_price float32, down_duration uint64)
   LANGUAGE JAVASCRIPT AS $$ ${DIPS_SOURCE.replace('RETURNED', returned)} $$`;

/** Ingest one batch and wait until the query has read it, so the next one is a later step. */
async function batch(
  q: StreamingQuery | undefined,
  s: string,
  scanned: number,
  rows: unknown[][],
): Promise<void> {
  await api.ingest(s, ['k', 'ts', 'price'], rows);
  await q?.waitForScanned(scanned);
}

test('an aggregate with its own emit emits when process() asks, per group, only the results finalize() answers', async () => {
  await api.exec(dips('dips'));
  const s = await api.createStream('udf_dips', "(k int8, ts datetime64(3, 'UTC'), price float32)");
  const q = await api.start(
    `SELECT k, d.1, d.2, d.3, d.4 FROM (SELECT k, dips(ts, price) AS d FROM ${s} GROUP BY k) ORDER BY k`,
  );
  const direct = await api.start(`SELECT k, dips(ts, price) FROM ${s} GROUP BY k`);
  await batch(direct, s, 2, [
    [1, '2020-02-02 20:00:00', 10],
    [2, '2020-02-02 20:00:00', 20],
  ]);
  // falls: no result yet, nothing emitted
  await batch(direct, s, 4, [
    [1, '2020-02-02 20:00:01', 3],
    [2, '2020-02-02 20:00:01', 10],
  ]);
  // group 1 rises (one result), group 2 stays flat (none)
  await api.ingest(
    s,
    ['k', 'ts', 'price'],
    [
      [1, '2020-02-02 20:00:02', 11],
      [2, '2020-02-02 20:00:02', 10],
    ],
  );
  await direct.waitForRows(1);
  // another dip of group 1 and the first of group 2, in one batch: one result each
  await api.ingest(
    s,
    ['k', 'ts', 'price'],
    [
      [1, '2020-02-02 20:00:03', 4],
      [2, '2020-02-02 20:00:03', 4],
      [1, '2020-02-02 20:00:04', 5],
      [2, '2020-02-02 20:00:04', 6],
    ],
  );
  await direct.waitForRows(3);
  await q.waitForRows(3);
  const dip = (start: number, bottom: string, end: number, len: number) => ({
    start_price: start,
    bottom_ts: `2020-02-02 20:00:0${bottom}.000`,
    end_price: end,
    down_duration: len,
  });
  assertSameRows(direct.rows.slice(0, 1), [[1, dip(10, '1', 11, 2)]]);
  assertSameRows(direct.rows.slice(1), [
    [1, dip(11, '3', 5, 2)],
    [2, dip(20, '3', 6, 4)],
  ]);
  await direct.cancel();
  // the emitted rows come in order of the batches that completed them
  assertSameRows(q.rows.slice(0, 1), [[1, 10, '2020-02-02 20:00:01.000', 11, 2]]);
  assertSameRows(q.rows.slice(1), [
    [1, 11, '2020-02-02 20:00:03.000', 5, 2],
    [2, 20, '2020-02-02 20:00:03.000', 6, 4],
  ]);
  await q.cancel();

  // Without GROUP BY: one group of every row.
  const all = await api.start(`SELECT d.1, d.3 FROM (SELECT dips(ts, price) AS d FROM ${s})`);
  const allDirect = await api.start(`SELECT dips(ts, price) FROM ${s}`);
  await batch(allDirect, s, 2, [
    [1, '2020-02-02 20:00:05', 10],
    [2, '2020-02-02 20:00:06', 20],
  ]);
  await api.ingest(
    s,
    ['k', 'ts', 'price'],
    [
      [1, '2020-02-02 20:00:07', 3],
      [2, '2020-02-02 20:00:08', 4],
    ],
  );
  assertSameRows(await all.waitForRows(1), [[20, 4]]);
  assert.deepEqual(await allDirect.waitForRows(1), [
    [{ start_price: 20, bottom_ts: '2020-02-02 20:00:07.000', end_price: 4, down_duration: 2 }],
  ]);
  await all.cancel();
  await allDirect.cancel();
});

test('an aggregate with its own emit is refused where Proton refuses it, with its codes', async () => {
  await api.exec(dips('dips_checked'));
  await api.exec(dips('dips_true', 'true'));
  const s = await api.createStream('udf_dips_bad', "(k int8, ts datetime64(3, 'UTC'), price float32)");
  const refused: [string, number, RegExp][] = [
    // beside another aggregate
    [`SELECT k, dips_checked(ts, price), count() FROM ${s} GROUP BY k`, 48, /only aggregate of its SELECT/],
    // in a historical query
    [`SELECT k, dips_checked(ts, price) FROM table(${s}) GROUP BY k`, 2534, /only a streaming query/],
    // with a timer of the query's own
    [`SELECT k, dips_checked(ts, price) FROM ${s} GROUP BY k EMIT PERIODIC 1s`, 48, /EMIT clause/],
    // an int8 column for a datetime64 argument (checked before the emit rules)
    [
      `SELECT k, dips_checked(k, price), count() FROM ${s} GROUP BY k`,
      43,
      /Argument 1 of function dips_checked must be datetime64\(3\), but it is int8/,
    ],
    // a missing argument
    [`SELECT k, dips_checked(price) FROM ${s} GROUP BY k`, 42, /passed 1, should be 2/],
  ];
  for (const [sql, code, message] of refused) {
    const r = await api.startError(sql);
    assert.equal(r.code, code, `${sql}: ${JSON.stringify(r)}`);
    assert.match(r.message, message, sql);
  }
  // process() answering something that is not a count fails the query when it runs (53).
  const q = await api.start(`SELECT k, dips_true(ts, price) FROM ${s} GROUP BY k`);
  await api.ingest(s, ['k', 'ts', 'price'], [[1, '2020-02-02 20:00:00', 10]]);
  const end = await q.waitForEnd();
  assert.equal(end.status, 'failed', JSON.stringify(end));
  assert.match(JSON.stringify(end), /"code":53/);
  assert.match(JSON.stringify(end), /must return how many results to emit/);
});

test('a JavaScript aggregate over substreams (OVER (PARTITION BY ...)) folds each substream on its own', async () => {
  await api.exec(`CREATE AGGREGATE FUNCTION sec_large(value float32) RETURNS float32 LANGUAGE JAVASCRIPT AS $$
    { initialize: function () { this.max = -1.0; this.sec = -1.0; },
      process: function (values) {
        for (let i = 0; i < values.length; i++) {
          if (values[i] > this.max) { this.sec = this.max; this.max = values[i]; }
          if (values[i] < this.max && values[i] > this.sec) this.sec = values[i];
        }
      },
      finalize: function () { return this.sec; } } $$`);
  const s = await api.createStream('udf_substreams', '(i int32, i8 int8, f float32)');
  const q = await api.start(
    `SELECT i8, sec_large(f) OVER (PARTITION BY i) FROM ${s} GROUP BY i8 EMIT ON UPDATE`,
  );
  await api.ingest(
    s,
    ['i', 'i8', 'f'],
    [
      [1, 5, 1],
      [2, 4, 2],
      [3, 5, 3],
      [2, 4, 4],
    ],
  );
  // substream 2 holds 2 and 4 (second largest 2); substreams 1 and 3 one value each (-1)
  assertSameRows(await q.waitForRows(3), [
    [5, -1],
    [4, 2],
    [5, -1],
  ]);
  await q.cancel();
  // OVER with ORDER BY is no substream: refused clearly
  const r = await api.startError(`SELECT sec_large(f) OVER (PARTITION BY i ORDER BY f) FROM ${s}`);
  assert.equal(r.code, 48, JSON.stringify(r));
});
