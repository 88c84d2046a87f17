import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { eventually, SqlCalls } from '../helpers/sql-calls.ts';

let h: Harness;
const q = new SqlCalls(() => h);

before(async () => {
  h = await startHarness({ tuning: { mvRetry: { baseMs: 50, maxMs: 200 } } });
  await q.ok("CREATE STREAM src (i int64, k string, ts datetime64(3, 'UTC'))");
});
after(() => h.close());

const count = async (sql: string) => Number((await q.rows(sql))[0]?.[0]);

/** Rows i = from..to, key `k<i % 3>`, event time 2024-01-01 00:00:00 + i seconds. */
async function send(from: number, to: number, stream = 'src'): Promise<void> {
  const data: unknown[][] = [];
  for (let i = from; i <= to; i++)
    data.push([i, `k${i % 3}`, new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString()]);
  await q.ingest(stream, ['i', 'k', 'ts'], data);
}

function mvState(name: string) {
  const mvs = h.trb.services.mvs;
  return mvs.state(mvs.require('default', name));
}

async function running(name: string): Promise<void> {
  await eventually(`${name} running`, async () => mvState(name).status === 'ExecutingPipeline');
}

test('a tail view writes into its implicit target; table(mv) equals the historical query over the source', async () => {
  await q.ok('CREATE MATERIALIZED VIEW mv_tail AS SELECT i, k FROM src WHERE i % 2 = 0');
  await running('mv_tail');
  const cols = await q.rows('DESCRIBE mv_tail');
  assert.deepEqual(
    cols.map((c) => [c[0], c[1]]),
    [
      ['i', 'int64'],
      ['k', 'string'],
      ['_tp_time', "datetime64(3, 'UTC')"],
    ],
  );
  await send(1, 20);
  const expected = await q.rows('SELECT i, k FROM table(src) WHERE i % 2 = 0 ORDER BY i');
  await eventually('rows in mv_tail', async () => (await count('SELECT count() FROM table(mv_tail)')) === 10);
  assert.deepEqual(await q.rows('SELECT i, k FROM table(mv_tail) ORDER BY i'), expected);
  assert.deepEqual(await q.rows("SHOW MATERIALIZED VIEWS LIKE 'mv_tail'"), [['mv_tail']]);
});

test('a global aggregation into its implicit target ends at the historical result', async () => {
  await q.ok(
    'CREATE MATERIALIZED VIEW mv_agg AS SELECT k, count() AS c, sum(i) AS total FROM src GROUP BY k EMIT PERIODIC 100ms',
  );
  await running('mv_agg');
  const base = await count('SELECT count() FROM table(src)');
  await send(base + 1, base + 30);
  // What the view computes over the rows it saw (those written after it started).
  const expected = await q.rows(
    `SELECT k, count(), sum(i) FROM table(src) WHERE i > ${base} GROUP BY k ORDER BY k`,
  );
  const latest = `SELECT k, argMax(c, _tp_time), argMax(total, _tp_time) FROM table(mv_agg) GROUP BY k ORDER BY k`;
  await eventually(
    'mv_agg caught up',
    async () => JSON.stringify(await q.rows(latest)) === JSON.stringify(expected),
  );
});

test('a tumble window into an INTO target: columns by name, missing ones take their defaults', async () => {
  await q.ok(
    "CREATE STREAM win_out (ws datetime64(3, 'UTC'), k string, c uint64, note string DEFAULT 'none')",
  );
  await q.ok(
    'CREATE MATERIALIZED VIEW mv_win INTO win_out AS SELECT window_start AS ws, k, count() AS c FROM tumble(src, ts, 10s) GROUP BY window_start, k',
  );
  await running('mv_win');
  await send(1000, 1039);
  // A row far later closes every window before it.
  await send(1100, 1100);
  const expected = await q.rows(
    'SELECT window_start, k, count() FROM tumble(table(src), ts, 10s) WHERE i >= 1000 AND i < 1040 GROUP BY window_start, k ORDER BY window_start, k',
  );
  assert.equal(expected.length, 12);
  await eventually(
    'windows in win_out',
    async () => (await count('SELECT count() FROM table(win_out)')) === 12,
  );
  assert.deepEqual(await q.rows('SELECT ws, k, c FROM table(win_out) ORDER BY ws, k'), expected);
  assert.deepEqual(await q.rows('SELECT DISTINCT note FROM table(win_out)'), [['none']]);
  // The view's name reads its target.
  assert.equal(await count('SELECT count() FROM table(mv_win)'), 12);
});

test('several views write into one target; a view over a view', async () => {
  await q.ok('CREATE STREAM merged (i int64, k string)');
  await q.ok("CREATE MATERIALIZED VIEW mv_a INTO merged AS SELECT i, 'a' AS k FROM src");
  await q.ok("CREATE MATERIALIZED VIEW mv_b INTO merged AS SELECT i, 'b' AS k FROM src");
  await q.ok("CREATE MATERIALIZED VIEW mv_chain AS SELECT i * 10 AS i10 FROM mv_a WHERE k = 'a'");
  await Promise.all(['mv_a', 'mv_b', 'mv_chain'].map(running));
  await send(2000, 2004);
  await eventually('both views wrote', async () => (await count('SELECT count() FROM table(merged)')) === 10);
  assert.deepEqual(
    await q.rows('SELECT k, count() FROM table(merged) GROUP BY k ORDER BY k'),
    [
      ['a', '5'],
      ['b', '5'],
    ].map(([k, c]) => [k, Number(c)]),
  );
  // mv_chain reads mv_a's target (merged), where k = 'a' keeps mv_a's rows.
  await eventually('mv_chain wrote', async () => (await count('SELECT count() FROM table(mv_chain)')) === 5);
  assert.deepEqual(await q.rows('SELECT i10 FROM table(mv_chain) ORDER BY i10'), [
    [20000],
    [20010],
    [20020],
    [20030],
    [20040],
  ]);
});

test('bad input: clear 4xx and nothing created half', async () => {
  await q.fails('CREATE MATERIALIZED VIEW bad1 AS SELECT * FROM nowhere', 404, 60);
  await q.fails('CREATE MATERIALIZED VIEW bad2 INTO nowhere AS SELECT i FROM src', 404, 60);
  await q.ok('CREATE STREAM narrow (i int64)');
  await q.fails('CREATE MATERIALIZED VIEW bad3 INTO narrow AS SELECT i, k FROM src', 400, 16, /no column k/);
  await q.ok('CREATE STREAM arrays (i array(int64))');
  await q.fails('CREATE MATERIALIZED VIEW bad4 INTO arrays AS SELECT i FROM src', 400, 53);
  await q.fails(
    'CREATE MATERIALIZED VIEW bad5 INTO src AS SELECT i, k, ts FROM src',
    400,
    80,
    /would read what it writes/,
  );
  // A loop through another view: mv_tail writes mv_tail; writing into src from mv_tail closes it.
  await q.fails('CREATE MATERIALIZED VIEW bad6 INTO src AS SELECT i, k FROM mv_tail', 400, 80);
  await q.fails('CREATE MATERIALIZED VIEW bad7 AS SELECT i FROM table(src)', 400, 80, /streaming query/);
  await q.fails('CREATE MATERIALIZED VIEW mv_tail AS SELECT i FROM src', 409, 57);
  await q.fails('CREATE MATERIALIZED VIEW bad8 AS SELECT i FROM src SETTINGS pause_on_start = 7', 400, 36);
  const names = (await q.rows('SHOW STREAMS')).map((r) => r[0]);
  for (const n of ['bad1', 'bad2', 'bad3', 'bad4', 'bad5', 'bad6', 'bad7', 'bad8']) {
    assert.ok(!names.includes(n), `${n} was left behind`);
    assert.equal(h.trb.services.views.get('default', n), undefined);
  }
  // Streams a view reads or writes cannot be dropped; the implicit target neither (drop the view).
  await q.fails('DROP STREAM src', 409, 630, /mv_tail/);
  await q.fails('DROP STREAM win_out', 409, 630, /mv_win/);
  assert.ok(h.trb.services.streams.get('default', 'mv_tail'));
});

test('pause keeps the position: nothing written while paused, nothing lost at resume', async () => {
  await q.ok('CREATE MATERIALIZED VIEW mv_pause AS SELECT i FROM src WHERE i >= 3000');
  await running('mv_pause');
  await send(3000, 3004);
  await eventually('first rows', async () => (await count('SELECT count() FROM table(mv_pause)')) === 5);
  await q.ok('SYSTEM PAUSE MATERIALIZED VIEW mv_pause');
  assert.equal(mvState('mv_pause').status, 'Paused');
  await send(3005, 3009);
  // The view's execution has read the new rows and waits at the pause gate with them.
  await eventually('rows held at the gate', async () => mvState('mv_pause').held > 0);
  assert.equal(await count('SELECT count() FROM table(mv_pause)'), 5);
  await q.ok('SYSTEM RESUME MATERIALIZED VIEW mv_pause');
  await eventually('resumed rows', async () => (await count('SELECT count() FROM table(mv_pause)')) === 10);
  assert.deepEqual(
    (await q.rows('SELECT i FROM table(mv_pause) ORDER BY i')).map((r) => r[0]),
    Array.from({ length: 10 }, (_, i) => 3000 + i),
  );
});

test('pause_on_start: created paused, writes after resume', async () => {
  await q.ok(
    'CREATE MATERIALIZED VIEW mv_later AS SELECT i FROM src WHERE i >= 4000 SETTINGS pause_on_start = true',
  );
  await eventually('paused', async () => mvState('mv_later').status === 'Paused');
  await send(4000, 4001);
  await q.ok('SYSTEM RESUME MATERIALIZED VIEW mv_later');
  await eventually(
    'rows after resume',
    async () => (await count('SELECT count() FROM table(mv_later)')) === 2,
  );
});

test('DROP VIEW drops an implicit target and keeps an INTO target', async () => {
  await q.ok('CREATE STREAM kept (i int64)');
  await q.ok('CREATE MATERIALIZED VIEW mv_into AS SELECT i FROM src');
  await q.ok('CREATE MATERIALIZED VIEW mv_into2 INTO kept AS SELECT i FROM src');
  await q.ok('DROP VIEW mv_into');
  await q.ok('DROP VIEW mv_into2');
  assert.equal(h.trb.services.streams.get('default', 'mv_into'), undefined);
  assert.ok(h.trb.services.streams.get('default', 'kept'));
  await q.ok('DROP STREAM kept');
  await q.ok('DROP VIEW IF EXISTS mv_into');
  await q.fails('DROP VIEW mv_into', 404, 60);
});

test('ALTER STREAM of a view: INTO targets refuse it, implicit targets take settings and TTL only', async () => {
  await q.ok('CREATE STREAM alt_into (i int64)');
  await q.ok('CREATE MATERIALIZED VIEW mv_alt_into INTO alt_into AS SELECT i FROM src');
  await q.ok('CREATE MATERIALIZED VIEW mv_alt AS SELECT i FROM src');
  // Proton's StorageMaterializedView: 48 for a view with a target of its own; REMOVE TTL is
  // checked first (the view has no TTL), 36.
  await q.fails('ALTER STREAM mv_alt_into MODIFY SETTING logstore_retention_bytes = 1000000', 400, 48);
  await q.fails('ALTER STREAM mv_alt_into MODIFY TTL to_datetime(_tp_time) + INTERVAL 1 DAY', 400, 48);
  await q.fails('ALTER STREAM mv_alt_into REMOVE TTL', 400, 36);
  // The implicit target (it has the view's name) takes the change.
  await q.ok('ALTER STREAM mv_alt MODIFY SETTING logstore_retention_bytes = 1000000');
  await q.ok('ALTER STREAM mv_alt MODIFY TTL to_datetime(_tp_time) + INTERVAL 1 DAY');
  await q.ok('ALTER STREAM mv_alt REMOVE TTL');
  await q.fails('ALTER STREAM mv_alt ADD COLUMN j int64', 400, 48);
  // The INTO target itself is a stream like any other.
  await q.ok('ALTER STREAM alt_into MODIFY SETTING logstore_retention_bytes = 1000000');
  await q.ok('DROP VIEW mv_alt_into');
  await q.ok('DROP VIEW mv_alt');
  await q.ok('DROP STREAM alt_into');
});

test('after a restart every view runs again and writes new results', async () => {
  const before = await count('SELECT count() FROM table(mv_tail)');
  h = await h.restart();
  await running('mv_tail');
  await send(5000, 5003);
  await eventually(
    'new rows after restart',
    async () => (await count('SELECT count() FROM table(mv_tail)')) === before + 2,
  );
  // A view paused before the restart stays paused.
  await q.ok('SYSTEM PAUSE MATERIALIZED VIEW mv_pause');
  h = await h.restart();
  assert.equal(mvState('mv_pause').status, 'Paused');
  await running('mv_tail');
});
