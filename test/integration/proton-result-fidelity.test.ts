/**
 * Results as Proton prints them (issue 13, item 5): column names of `f(DISTINCT x)`, float32
 * values, a select alias reused in GROUP BY, and regexp functions that answer the same rows in
 * streaming and historical queries.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
  await api.exec('CREATE STREAM fid_s (id string, v float32, j string)');
});
after(() => api.close());

const ROWS = `INSERT INTO fid_s (id, v, j) VALUES ('a', 58.3, '{"a":[1,2]} x1y2'), ('b', 1.1, '{"a":[3]}'), ('a', 2.5, '{"a":[3]}')`;

/** Header names and rows of a historical query. */
async function historical(sql: string): Promise<{ header: string[]; rows: unknown[][] }> {
  const { header, rows } = await api.historical(sql);
  return { header: header.map((c) => c.name), rows };
}

const REGEXP =
  "extract_all_groups(j, '(\\\\d)') AS g, extract_all_groups_horizontal(j, '(\\\\w)(\\\\d)') AS h, regexp_extract(j, '\\\\d') AS r, extract_all(j, '\\\\d+') AS e, replace_regex(j, '\\\\d', 'N') AS n";

test('streaming and historical: DISTINCT aggregates keep their Proton names, float32 prints short, regexps agree', async () => {
  const agg = await api.start('SELECT count(DISTINCT id), sum(DISTINCT to_int32(v)), max(v) FROM fid_s');
  const tail = await api.start(`SELECT id, v, ${REGEXP} FROM fid_s`);
  const grouped = await api.start(
    "SELECT json_extract_array_raw(j, 'a') AS a, count() AS c FROM fid_s GROUP BY a",
  );
  await api.exec(ROWS);
  assert.deepEqual(agg.header, ['count(DISTINCT id)', 'sum(DISTINCT to_int32(v))', 'max(v)']);
  await agg.waitForRows(1);
  const streamed = await tail.waitForRows(3);
  await grouped.waitForRows(2);

  const h = await historical(
    'SELECT count(DISTINCT id), sum(DISTINCT to_int32(v)), max(v) FROM table(fid_s)',
  );
  assert.deepEqual(h.header, agg.header);
  // max over float32 stays float32 and prints as Proton prints it (58.3, not 58.29999923706055).
  assert.deepEqual(h.rows, [[2, 61, 58.3]]);
  assert.deepEqual((await agg.waitForQuiet(300)).at(-1), h.rows[0]);

  const ht = await historical(`SELECT id, v, ${REGEXP} FROM table(fid_s) ORDER BY _tp_sn`);
  assert.deepEqual(streamed, ht.rows);
  assert.deepEqual(ht.rows[0], [
    'a',
    58.3,
    [['1'], ['2'], ['1'], ['2']],
    [
      ['x', 'y'],
      ['1', '2'],
    ],
    '1',
    ['1', '2', '1', '2'],
    '{"a":[N,N]} xNyN',
  ]);

  // The alias of a select item reused in GROUP BY: the first row is not JSON, so its array is [].
  const hg = await historical(
    "SELECT json_extract_array_raw(j, 'a') AS a, count() AS c FROM table(fid_s) GROUP BY a ORDER BY c",
  );
  assert.deepEqual(hg.rows, [
    [[], 1],
    [['3'], 2],
  ]);
  const sg = await grouped.waitForQuiet(300);
  assert.deepEqual(
    [...sg].sort((x, y) => Number(x[1]) - Number(y[1])),
    hg.rows,
  );
  for (const q of [agg, tail, grouped]) await q.cancel();
});

test("to_time parses Proton's string forms, with a time zone and a default for what does not parse", async () => {
  const r = await historical(
    "SELECT to_time('1/2/22'), to_time('2023-09-19T05:31:34.026Z'), to_time('2023-09-19T05:31:34.302+00:00', 'UTC'), to_time('6/9/2024 13:28', 'Europe/London'), to_time('nope', 'UTC', '2020-01-01 00:00:00')",
  );
  assert.deepEqual(r.rows, [
    [
      '2022-01-02 00:00:00.000',
      '2023-09-19 05:31:34.026',
      '2023-09-19 05:31:34.302',
      '2024-06-09 13:28:00.000',
      '2020-01-01 00:00:00.000',
    ],
  ]);
});

test('streaming results print NaN as nan, never the engine -nan, as historical ones do', async () => {
  const q = await api.start("SELECT id, v - v / 0 * 0 AS n, [v / 0 * 0] AS a FROM fid_s WHERE id = 'nan'");
  await api.exec("INSERT INTO fid_s (id, v, j) VALUES ('nan', 1.5, '')");
  assert.deepEqual(await q.waitForRows(1), [['nan', 'nan', ['nan']]]);
  const h = await historical(
    "SELECT id, v - v / 0 * 0 AS n, [v / 0 * 0] AS a FROM table(fid_s) WHERE id = 'nan'",
  );
  assert.deepEqual(h.rows, [['nan', 'nan', ['nan']]]);
  await q.cancel();
});

test('xirr aggregates in a streaming query as in a historical one', async () => {
  await api.exec('CREATE STREAM fid_xirr (income float64, d date)');
  const q = await api.start('SELECT xirr(income, d) FROM fid_xirr');
  await api.exec("INSERT INTO fid_xirr (income, d) VALUES (-100, '2021-01-01'), (110, '2022-01-01')");
  await q.waitForRows(1);
  const [[streamed]] = (await q.waitForQuiet(500)).slice(-1) as [[number]];
  const h = await historical('SELECT xirr(income, d) FROM table(fid_xirr)');
  assert.ok(Math.abs(streamed - 0.1) < 1e-6, String(streamed));
  assert.deepEqual(h.rows, [[streamed]]);
  await q.cancel();
});
