/**
 * Session windows over joins of changelog inputs (issue 10). Proton assigns every row that reaches
 * the session aggregation to a session by its time (SessionHelper::assignWindow reads no
 * `_tp_delta`), the join's retractions (-1) as well as its additions (+1), and aggregates them with
 * the retracting forms of the aggregates (`__count_retract`, `__sum_retract`, ...). So a session
 * holds the net multiset of its rows; a retraction extends a session as any row does; a session
 * whose rows all cancel out is still emitted, with the aggregates of no rows (count 0).
 * A row older than an earlier row of its substream is late and dropped (streaming-session.test.ts),
 * retractions included: the rows below keep their times non-decreasing.
 * Expected rows are computed by hand.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
});

const at = (s: number) => `'2024-01-01 00:00:${String(s).padStart(2, '0')}'`;
const ts = (s: number) => `2024-01-01 00:00:${String(s).padStart(2, '0')}.000`;

const sides = async () => {
  const l = await api.createStream(
    'sl',
    "(i int32, k string, t datetime64(3)) PRIMARY KEY i SETTINGS mode='versioned_kv'",
  );
  const r = await api.createStream('sr', "(j int32, kk string) PRIMARY KEY j SETTINGS mode='versioned_kv'");
  return { l, r };
};

/** The inserts both forms of the query see, and the rows they answer. */
async function run(sql: string, l: string, r: string): Promise<unknown[][]> {
  const q = await api.start(sql);
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (10, 'x'), (11, 'x')`, 0);
  // 1 at 1s joins 10 and 11: (+1, j 10), (+1, j 11).
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (1, 'x', ${at(1)})`, 0);
  // 11 moves to y: (-1, i 1, j 11, 1s), not late (1s is the largest time so far).
  await api.execAndWait(q, `INSERT INTO ${r} (j, kk) VALUES (11, 'y')`, 0);
  // 2 at 3s joins 10: the session [1s, ...) holds i 1 and 2, both with j 10.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (2, 'x', ${at(3)})`, 0);
  // 3 at 20s: past 3s + 5s, the first session closes at 8s: 2 rows, sum(j) 20, sum(i) 3
  // (3 rows, 31 and 4 without the retraction).
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (3, 'x', ${at(20)})`, 1);
  // 3 moves to w (joins nothing): (-1, i 3, j 10, 20s); the session [20s, ...) nets to no row.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (3, 'w', ${at(21)})`, 1);
  // 4 at 40s closes it at 25s: emitted with count 0.
  await api.execAndWait(q, `INSERT INTO ${l} (i, k, t) VALUES (4, 'x', ${at(40)})`, 2);
  const rows = await q.waitForQuiet(300);
  await q.cancel();
  return rows;
}

const expected = [
  [ts(1), ts(8), 2, 20, 3],
  [ts(20), ts(25), 0, 0, 0],
];

test('session over a subquery joining versioned_kv streams: a retraction takes its row out of the session', async () => {
  const { l, r } = await sides();
  const rows = await run(
    `SELECT window_start, window_end, count(), sum(j), sum(i) FROM session((SELECT i, j, t FROM ${l} AS a JOIN ${r} AS b ON a.k = b.kk), t, 5s) GROUP BY window_start, window_end`,
    l,
    r,
  );
  assert.deepEqual(rows, expected);
});

test('session(l, t, 5s) AS a JOIN r: the same rows as through a subquery', async () => {
  const { l, r } = await sides();
  const rows = await run(
    `SELECT window_start, window_end, count(), sum(j), sum(i) FROM session(${l}, t, 5s) AS a JOIN ${r} AS b ON a.k = b.kk GROUP BY window_start, window_end`,
    l,
    r,
  );
  assert.deepEqual(rows, expected);
});
