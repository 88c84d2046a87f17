/**
 * A streaming aggregation (a CTE over a tumble window) JOIN a versioned_kv stream: each row the
 * aggregation emits meets the latest row of its key at that step (Proton's 0023_mv ids 4, 5), as a
 * plain streaming query and inside materialized views (checkpointed, with and without INTO).
 */
import { after, before, test } from 'node:test';
import { assertSameRows, StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
});

const select = (src: string, kv: string) =>
  `WITH results AS (SELECT i, format_datetime(window_end, '%Y-%m-%d %H:%i:%S', 'UTC') AS timestamp, to_string(max(v)) AS recordValue FROM tumble(${src}, t, 2s) GROUP BY i, window_end) ` +
  `SELECT ${kv}.id AS customerId, results.timestamp AS timestamp, results.recordValue AS recordValue, ${kv}.value AS value FROM results INNER JOIN ${kv} ON i = id`;

// Hand-computed: kv 1 -> 'test'; rows at 0 s (1), 1 s (2), 3 s (3) close [0, 2): i 1 and 2, only
// key 1 in kv. kv 1 -> 'test2', 2 -> 'test3'; rows at 3 s (1, 2), 4 s (3) close [2, 4): i 1
// (t11), 2 (t22), 3 (t3, no kv row: dropped by INNER).
const EXPECTED = [
  [1, '2022-10-01 00:00:02', 't1', 'test'],
  [1, '2022-10-01 00:00:04', 't11', 'test2'],
  [2, '2022-10-01 00:00:04', 't22', 'test3'],
];

async function feed(src: string, kv: string, after: () => Promise<void> = async () => {}) {
  await api.exec(`INSERT INTO ${kv} (id, value) VALUES (1, 'test')`);
  await after();
  await api.exec(
    `INSERT INTO ${src} (i, v, t) VALUES (1, 't1', '2022-10-01 00:00:00'), (2, 't2', '2022-10-01 00:00:01'), (3, 't3', '2022-10-01 00:00:03')`,
  );
  await after();
  await api.exec(`INSERT INTO ${kv} (id, value) VALUES (1, 'test2'), (2, 'test3')`);
  await after();
  await api.exec(
    `INSERT INTO ${src} (i, v, t) VALUES (1, 't11', '2022-10-01 00:00:03'), (2, 't22', '2022-10-01 00:00:03'), (3, 't33', '2022-10-01 00:00:04')`,
  );
}

async function streams() {
  const src = await api.createStream('asrc', "(i int, v string, t datetime64(3, 'UTC'))");
  const kv = await api.createStream(
    'akv',
    "(id int, value string) PRIMARY KEY id SETTINGS mode='versioned_kv'",
  );
  return { src, kv };
}

test('a tumble aggregation CTE joined with a versioned_kv stream, as a streaming query', async () => {
  const { src, kv } = await streams();
  const q = await api.start(select(src, kv));
  let seen = 0;
  await feed(src, kv, async () => {
    // Each insert is its own step, so the kv row of that time is the one each emit meets.
    await q.waitForScanned(++seen);
  });
  assertSameRows(await q.settle(3), EXPECTED);
  await q.cancel();
});

test('the same join inside materialized views, with an implicit target and INTO a stream', async () => {
  const { src, kv } = await streams();
  const target = await api.createStream(
    'atgt',
    '(customerId int, timestamp string, recordValue string, value string)',
  );
  await api.exec(`CREATE MATERIALIZED VIEW ${src}_mv AS ${select(src, kv)}`);
  await api.exec(`CREATE MATERIALIZED VIEW ${src}_mv_into INTO ${target} AS ${select(src, kv)}`);
  const q = await api.start(
    `SELECT (* EXCEPT _tp_time) FROM ${src}_mv UNION SELECT (* EXCEPT _tp_time) FROM ${src}_mv_into`,
  );
  // Each window's rows written by both views before the kv rows change (the rows an emit meets
  // are the kv rows of its step): the first window's 2 rows, then the second's 4.
  let inserts = 0;
  await feed(src, kv, async () => {
    if (++inserts === 2) await q.waitForRows(2);
  });
  assertSameRows(await q.settle(6), [...EXPECTED, ...EXPECTED]);
  await q.cancel();
});
