/**
 * Functions the streaming planner runs in streaming queries and Proton also accepts in historical
 * queries, with their historical meaning (src/sql/translator/historical-streaming-functions.ts):
 * lag, lags, earliest_ts / earliest_timestamp, date_diff_within, lag_behind, and neighbor.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
  for (const sql of [
    'CREATE STREAM hsf_l (id int, t datetime)',
    'CREATE STREAM hsf_r (id int, t datetime, v string)',
    "INSERT INTO hsf_l (id, t) VALUES (1, '2024-01-01 00:00:10'), (2, '2024-01-01 00:00:20')",
    "INSERT INTO hsf_r (id, t, v) VALUES (1, '2024-01-01 00:00:11', 'near'), (1, '2024-01-01 00:00:30', 'far'), (2, '2024-01-01 00:00:19', 'near2')",
  ]) {
    const r = await h.call('POST', '/v1beta2/exec', { body: { sql, type: 'ddl' } });
    assert.equal(r.statusCode, 204, r.body);
  }
});
after(() => h.close());

async function rows(sql: string): Promise<unknown[][]> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql } });
  assert.equal(r.statusCode, 200, `${sql}: ${r.body}`);
  const out: unknown[][] = [];
  for (const block of r.body.split('\n\n')) {
    const lines = block.split('\n');
    if (lines.some((l) => l.startsWith('event: '))) continue;
    const data = lines.find((l) => l.startsWith('data: '));
    if (data) out.push(...(JSON.parse(data.slice(6)) as unknown[][]));
  }
  return out;
}

test('lag and lags read earlier rows in read order, with the default (or the type default) before the first', async () => {
  assert.deepEqual(
    await rows(
      "SELECT number, lag(number), lag(number, 2, 100), lags(number, 1, 3), lags(to_string(number), 1, 2, 'x') FROM numbers(4)",
    ),
    [
      [0, 0, 100, [0, 0, 0], ['x', 'x']],
      [1, 0, 100, [0, 0, 0], ['0', 'x']],
      [2, 1, 0, [1, 0, 0], ['1', '0']],
      [3, 2, 1, [2, 1, 0], ['2', '1']],
    ],
  );
  // After WHERE, as Proton evaluates it: the previous row that passed the filter.
  assert.deepEqual(await rows('SELECT number, lag(number) FROM numbers(6) WHERE number % 2 = 0'), [
    [0, 0],
    [2, 0],
    [4, 2],
  ]);
  assert.deepEqual(await rows('SELECT id, lag(t) FROM table(hsf_l) ORDER BY id'), [
    [1, '1970-01-01 00:00:00'],
    [2, '2024-01-01 00:00:10'],
  ]);
});

test('lags() refuses offsets that are not positive integer constants', async () => {
  const r = await h.call('POST', '/v1beta2/queries', {
    body: { sql: 'SELECT lags(number, 0, 2) FROM numbers(2)' },
  });
  assert.equal(r.statusCode, 400, r.body);
  assert.match(r.json().message, /offsets must be integer constants/);
});

test('earliest_ts() is the epoch; neighbor works although the engine deprecates it', async () => {
  assert.deepEqual(
    await rows("SELECT earliest_ts(), earliest_timestamp(), earliest_timestamp('Asia/Shanghai')"),
    [['1970-01-01 00:00:00', '1970-01-01 00:00:00', '1970-01-01 08:00:00']],
  );
  assert.deepEqual(await rows('SELECT count() FROM table(hsf_l) WHERE _tp_time > earliest_ts()'), [[2]]);
  assert.deepEqual(await rows("SELECT neighbor(to_string(number), 1, 'end') FROM numbers(3)"), [
    ['1'],
    ['2'],
    ['end'],
  ]);
});

test('date_diff_within and lag_behind in historical joins', async () => {
  assert.deepEqual(
    await rows(
      'SELECT l.id, r.v FROM table(hsf_l) AS l JOIN table(hsf_r) AS r ON l.id = r.id AND date_diff_within(2s, l.t, r.t) ORDER BY l.id',
    ),
    [
      [1, 'near'],
      [2, 'near2'],
    ],
  );
  assert.deepEqual(
    await rows(
      'SELECT l.id, r.v FROM table(hsf_l) AS l ASOF JOIN table(hsf_r) AS r ON l.id = r.id AND l.t >= r.t AND lag_behind(10ms, l.t, r.t) ORDER BY l.id',
    ),
    [[2, 'near2']],
  );
});

test('emit_version() stays streaming-only', async () => {
  const r = await h.call('POST', '/v1beta2/queries', {
    body: { sql: 'SELECT emit_version() FROM table(hsf_l)' },
  });
  assert.equal(r.statusCode, 400, r.body);
  assert.match(r.json().message, /emit_version is only supported in streaming queries/);
});

test('date_diff_within(interval) with no time columns stays a streaming-join form', async () => {
  const r = await h.call('POST', '/v1beta2/queries', {
    body: {
      sql: 'SELECT l.id FROM table(hsf_l) AS l JOIN table(hsf_r) AS r ON l.id = r.id AND date_diff_within(2s)',
    },
  });
  assert.equal(r.statusCode, 400, r.body);
  assert.equal(r.json().code, 48);
  assert.match(r.json().message, /only supported in streaming joins/);
});
