/**
 * JavaScript user-defined functions end to end: created with SQL and REST, called by the engine
 * (executable functions running src/udf/udf-process.mjs) in historical queries, streaming tails,
 * global aggregations and tumble windows; persisted across a restart.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertSameRows, type Row, StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api.close();
});

const ADD_FIVE = `CREATE FUNCTION add_five(value float32) RETURNS float32 LANGUAGE JAVASCRIPT AS $$
  function add_five(value) { for (let i = 0; i < value.length; i++) value[i] = value[i] + 5; return value; }
$$`;

const SECOND_LARGEST = `CREATE AGGREGATE FUNCTION second_largest(value float32) RETURNS float32 LANGUAGE JAVASCRIPT AS $$
{
  initialize: function () { this.max = -1.0; this.sec = -1.0; },
  process: function (values) {
    for (let i = 0; i < values.length; i++) {
      if (values[i] > this.max) { this.sec = this.max; this.max = values[i]; }
      if (values[i] < this.max && values[i] > this.sec) this.sec = values[i];
    }
  },
  finalize: function () { return this.sec; },
  serialize: function () { return JSON.stringify({ max: this.max, sec: this.sec }); },
  deserialize: function (s) { const o = JSON.parse(s); this.max = o.max; this.sec = o.sec; },
  merge: function (s) { const o = JSON.parse(s); if (o.max > this.max) { this.sec = Math.max(this.max, o.sec); this.max = o.max; } else if (o.max > this.sec) this.sec = o.max; }
}
$$`;

/** A historical query's rows (POST /queries, type historical), or its error. */
async function historical(sql: string): Promise<{ rows: Row[]; error?: { code: number; message: string } }> {
  const r = await api.post('/v1beta2/queries', { sql });
  if (!String(r.headers.get('content-type')).startsWith('text/event-stream')) {
    const body = (await r.json()) as { code: number; message: string };
    return { rows: [], error: body };
  }
  const text = await r.text();
  const rows: Row[] = [];
  let error: { code: number; message: string } | undefined;
  for (const block of text.split('\n\n')) {
    const lines = block.split('\n');
    const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
    const data = lines
      .filter((l) => l.startsWith('data: '))
      .map((l) => l.slice(6))
      .join('\n');
    if (!data) continue;
    if (!event) rows.push(...(JSON.parse(data) as Row[]));
    else if (event === 'query') {
      const q = JSON.parse(data) as { status: string; error?: { code: number; message: string } };
      if (q.status === 'failed') error = q.error ?? { code: -1, message: 'failed without an error' };
    }
  }
  return { rows, ...(error ? { error } : {}) };
}

test('a scalar JavaScript function created with SQL runs in historical queries and streaming tails', async () => {
  await api.exec(ADD_FIVE);
  const once = await historical(
    'SELECT add_five(1.5) AS a, add_five(to_float32(number)) AS b FROM numbers(3)',
  );
  assert.deepEqual(once, {
    rows: [
      [6.5, 5],
      [6.5, 6],
      [6.5, 7],
    ],
  });
  const s = await api.createStream('udf_tail', '(v float32)');
  const q = await api.start(`SELECT v, add_five(v) FROM ${s}`);
  await api.ingest(s, ['v'], [[1], [2]]);
  await q.waitForRows(2);
  assertSameRows(q.rows, [
    [1, 6],
    [2, 7],
  ]);
  assert.deepEqual(q.header, ['v', 'add_five(v)']);
  await q.cancel();
});

test('a JavaScript aggregate in a historical GROUP BY, a global streaming aggregation and a tumble window', async () => {
  await api.exec(SECOND_LARGEST);
  const s = await api.createStream('udf_agg', "(k string, v float32, ts datetime64(3, 'UTC'))", 'ts');
  const global = await api.start(`SELECT k, max(v), second_largest(v) FROM ${s} GROUP BY k ORDER BY k`);
  const windowed = await api.start(
    `SELECT window_start, second_largest(v) AS sec FROM tumble(${s}, ts, 10s) GROUP BY window_start`,
  );
  assert.deepEqual(global.header, ['k', 'max(v)', 'second_largest(v)']);
  await api.ingest(
    s,
    ['k', 'v', 'ts'],
    [
      ['a', 1, '2024-01-24 10:00:01'],
      ['a', 3, '2024-01-24 10:00:02'],
      ['b', 4, '2024-01-24 10:00:03'],
      ['a', 2, '2024-01-24 10:00:04'],
      ['b', 2, '2024-01-24 10:00:05'],
    ],
  );
  await global.waitForRows(2);
  assertSameRows(global.rows.slice(-2), [
    ['a', 3, 2],
    ['b', 4, 2],
  ]);
  // A second batch folds into the same groups (the group's values are the engine's -State).
  await api.ingest(
    s,
    ['k', 'v', 'ts'],
    [
      ['a', 2.5, '2024-01-24 10:00:12'],
      ['b', 9, '2024-01-24 10:00:13'],
    ],
  );
  await global.waitForRows(4);
  assertSameRows(global.rows.slice(-2), [
    ['a', 3, 2.5],
    ['b', 9, 4],
  ]);
  // The window [10:00:00, 10:00:10) closed when 10:00:12 arrived: 1, 3, 4, 2, 2 -> 3.
  await windowed.waitForRows(1);
  assertSameRows(windowed.rows, [['2024-01-24 10:00:00.000', 3]]);
  await global.cancel();
  await windowed.cancel();
  // Inside a view's query: rewritten where the view is expanded, in historical and streaming reads.
  await api.exec(`CREATE VIEW udf_agg_view AS SELECT k, second_largest(v) FROM table(${s}) GROUP BY k`);
  const view = await historical('SELECT * FROM udf_agg_view ORDER BY k');
  assert.deepEqual(view, {
    rows: [
      ['a', 2.5],
      ['b', 4],
    ],
  });
  await api.exec(`CREATE VIEW udf_agg_live AS SELECT k, second_largest(v) AS sec FROM ${s} GROUP BY k`);
  const live = await api.start("SELECT k, sec FROM udf_agg_live WHERE k = 'b'");
  await api.ingest(s, ['k', 'v', 'ts'], [['b', 5, '2024-01-24 10:00:14']]);
  // b: 4, 2, 9 before, 5 now: the view's state starts with the query (latest), so 5 alone -> -1
  const liveRows = await live.waitForRows(1);
  assert.deepEqual(liveRows.at(-1), ['b', -1]);
  await live.cancel();
  // b: 4, 2, 9 and the 5 of the view's reader
  const hist = await historical(`SELECT k, second_largest(v) FROM table(${s}) GROUP BY k ORDER BY k`);
  assert.deepEqual(hist, {
    rows: [
      ['a', 2.5],
      ['b', 5],
    ],
  });
});

test('bad JavaScript: a body that does not parse is refused at CREATE; one that throws, loops or allocates fails its query only', async () => {
  const parse = await api.post('/v1beta2/queries', {
    sql: 'CREATE FUNCTION broken(x float64) RETURNS float64 LANGUAGE JAVASCRIPT AS $$ function broken(x) { return x + ; } $$',
  });
  assert.equal(parse.status, 400);
  const parseBody = (await parse.json()) as { code: number; message: string };
  assert.equal(parseBody.code, 36);
  assert.match(parseBody.message, /does not parse/);

  await api.exec(
    "CREATE FUNCTION throws(x float64) RETURNS float64 LANGUAGE JAVASCRIPT AS $$ function throws(x) { throw new Error('no luck'); } $$",
  );
  await api.exec(
    'CREATE FUNCTION no_return(x float64) RETURNS float64 LANGUAGE JAVASCRIPT AS $$ function no_return(x) {} $$',
  );
  const slow = await api.post('/v1beta2/udfs', {
    name: 'loops',
    type: 'javascript',
    arguments: [{ name: 'x', type: 'float64' }],
    return_type: 'float64',
    source: 'function loops(x) { for (;;) {} }',
    execution_timeout: 300,
  });
  assert.equal(slow.status, 201, await slow.text());
  await api.exec(
    'CREATE FUNCTION hog(x float64) RETURNS float64 LANGUAGE JAVASCRIPT AS $$ function hog(x) { const a = []; for (;;) a.push(new Array(1e6).fill(1)); } $$',
  );
  await api.exec(`CREATE AGGREGATE FUNCTION bad_process(x float64) RETURNS float64 LANGUAGE JAVASCRIPT AS $$
    { initialize: function () {}, process: function (v) { throw new Error('process failed'); }, finalize: function () { return 1; } } $$`);
  await api.exec(`CREATE AGGREGATE FUNCTION bad_finalize(x float64) RETURNS float64 LANGUAGE JAVASCRIPT AS $$
    { initialize: function () {}, process: function (v) {}, finalize: function () { throw new Error('finalize failed'); } } $$`);

  // A streaming query running meanwhile is unharmed.
  const s = await api.createStream('udf_bystander', '(v float64)');
  const bystander = await api.start(`SELECT v * 2 FROM ${s}`);
  const cases: [string, number, RegExp][] = [
    ['SELECT throws(1)', 2533, /throws failed: no luck/],
    ['SELECT no_return(1)', 43, /must return an array/],
    ['SELECT loops(1)', 159, /loops timed out: did not return within 300 ms/],
    ['SELECT hog(1)', 241, /hog exceeded its memory limit/],
    ['SELECT bad_process(number) FROM numbers(3)', 503, /process failed/],
    ['SELECT bad_finalize(number) FROM numbers(3)', 2533, /finalize failed/],
    ['SELECT throws(1, 2)', 42, /doesn't match/],
    ['SELECT bad_process(number, 1) FROM numbers(3)', 42, /passed 2, should be 1/],
  ];
  for (const [sql, code, message] of cases) {
    const r = await historical(sql);
    assert.equal(r.error?.code, code, `${sql}: ${JSON.stringify(r)}`);
    assert.match(r.error?.message ?? '', message, sql);
  }
  // The server and the other functions are unharmed, the failed ones work again once fixed.
  assert.deepEqual(await historical('SELECT 1 + 1'), { rows: [[2]] });
  await api.ingest(s, ['v'], [[21]]);
  assert.deepEqual(await bystander.waitForRows(1), [[42]]);
  await bystander.cancel();
  await api.exec(
    'CREATE OR REPLACE FUNCTION throws(x float64) RETURNS float64 LANGUAGE JAVASCRIPT AS $$ function throws(x) { return x.map((v) => v * 2); } $$',
  );
  assert.deepEqual(await historical('SELECT throws(21)'), { rows: [[42]] });
});

test('a JavaScript aggregate over a changelog input folds the live rows at every emit', async () => {
  await api.exec(`CREATE AGGREGATE FUNCTION live_count(v float32) RETURNS float32 LANGUAGE JAVASCRIPT AS $$
    { initialize: function () { this.n = 0; }, process: function (v) { this.n += v.length; }, finalize: function () { return this.n; } } $$`);
  const s = await api.createStream(
    'udf_kv',
    "(k int32, v float32) PRIMARY KEY k SETTINGS mode = 'versioned_kv'",
  );
  const q = await api.start(`SELECT live_count(v), sum(v) FROM ${s}`);
  await api.ingest(
    s,
    ['k', 'v'],
    [
      [1, 10],
      [2, 20],
      [3, 30],
    ],
  );
  await q.waitForRows(1);
  assert.deepEqual(q.rows.at(-1), [3, 60]);
  // an update of key 1 retracts its old row: still three live rows
  await api.ingest(s, ['k', 'v'], [[1, 11]]);
  await q.waitForRows(2);
  assert.deepEqual(q.rows.at(-1), [3, 61]);
  await q.cancel();
});

test('a materialized view calls a scalar function and a JavaScript aggregate', async () => {
  await api.exec(
    'CREATE FUNCTION mv_double(v float64) RETURNS float64 LANGUAGE JAVASCRIPT AS $$ function mv_double(v) { return v.map((x) => x * 2); } $$',
  );
  await api.exec(`CREATE AGGREGATE FUNCTION mv_span(v float64) RETURNS float64 LANGUAGE JAVASCRIPT AS $$
    { initialize: function () { this.lo = Infinity; this.hi = -Infinity; },
      process: function (v) { for (const x of v) { this.lo = Math.min(this.lo, x); this.hi = Math.max(this.hi, x); } },
      finalize: function () { return this.hi - this.lo; } } $$`);
  const s = await api.createStream('udf_mv_src', "(k string, v float64, ts datetime64(3, 'UTC'))", 'ts');
  await api.exec(`CREATE MATERIALIZED VIEW udf_mv_tail AS SELECT k, mv_double(v) AS d FROM ${s}`);
  await api.exec(
    `CREATE MATERIALIZED VIEW udf_mv_win AS SELECT window_start AS ws, k, mv_span(v) AS span FROM tumble(${s}, ts, 10s) GROUP BY window_start, k`,
  );
  await api.ingest(
    s,
    ['k', 'v', 'ts'],
    [
      ['a', 1, '2024-01-24 10:00:01'],
      ['a', 7, '2024-01-24 10:00:02'],
      ['b', 5, '2024-01-24 10:00:03'],
      ['a', 0, '2024-01-24 10:00:15'],
    ],
  );
  const poll = async (sql: string, n: number) => {
    for (let i = 0; i < 200; i++) {
      const r = await historical(sql);
      if (r.rows.length >= n) return r.rows;
      await new Promise((res) => setTimeout(res, 50));
    }
    assert.fail(`${sql}: fewer than ${n} rows`);
  };
  assert.deepEqual(await poll('SELECT k, d FROM table(udf_mv_tail) ORDER BY k, d', 4), [
    ['a', 0],
    ['a', 2],
    ['a', 14],
    ['b', 10],
  ]);
  assert.deepEqual(await poll('SELECT ws, k, span FROM table(udf_mv_win) ORDER BY k', 2), [
    ['2024-01-24 10:00:00.000', 'a', 6],
    ['2024-01-24 10:00:00.000', 'b', 0],
  ]);
});

test('a subscribed query keeps a JavaScript aggregate state across RECOVER (checkpointed with the query)', async () => {
  await api.exec(`CREATE AGGREGATE FUNCTION sub_sorted(v int32) RETURNS string LANGUAGE JAVASCRIPT AS $$
    { initialize: function () { this.v = []; }, process: function (v) { this.v.push(...v); },
      finalize: function () { return this.v.sort((a, b) => a - b).join(','); } } $$`);
  const st = await api.createStream('udf_sub', '(i int32)');
  const q = await api.start(
    `subscribe to select sub_sorted(i) from ${st} emit periodic 100ms settings seek_to='earliest', checkpoint_interval=1`,
  );
  await api.exec(`insert into ${st}(i) values (3), (1), (2)`);
  await q.waitForRows(1);
  assert.deepEqual(q.rows.at(-1), ['1,2,3']);
  await q.cancel();
  await api.exec(`insert into ${st}(i) values (0)`);
  const r = await api.start(`recover from '${q.id}'`);
  await r.waitForRows(1);
  assert.deepEqual(r.rows.at(-1), ['0,1,2,3'], 'the recovered state holds the rows before the checkpoint');
  await r.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});
