/**
 * Flat tails (issue 12, src/streaming/flat-tail.ts): the plainest tails read their stream with the
 * step's range in their own WHERE and ORDER BY `_tp_sn`, not through a range subquery, and emit
 * exactly the rows, in the order, the subquery form emits. Other tails keep the subquery.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RowsPlan } from '../../src/queries/execution.ts';
import type { StreamingExecution } from '../../src/streaming/streaming-execution.ts';
import { runCollecting } from '../helpers/collect-rows.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { eventually, SqlCalls } from '../helpers/sql-calls.ts';

let h: Harness;
const q = new SqlCalls(() => h);
const USER = { username: 'admin', role: 'admin' as const };

before(async () => {
  h = await startHarness();
  await q.ok('CREATE STREAM flat_src (i int64, k string, v float64)');
});
after(() => h.close());

async function plan(sql: string): Promise<StreamingExecution> {
  return (await h.trb.services.planner.plan(sql, { user: USER, type: 'streaming' })) as RowsPlan as never;
}

const isFlat = (e: StreamingExecution) => !(e.program.tail?.text ?? '').includes('(SELECT *, _tp_sn');

let next = 1;
async function send(n: number): Promise<void> {
  const data: unknown[][] = [];
  for (let j = 0; j < n; j++, next++) data.push([next, `k${next % 3}`, (next % 7) - 3]);
  await q.ingest('flat_src', ['i', 'k', 'v'], data);
}

/** Run `sql` live over 8 commits of 5 rows: its rows are those of `expectedSql`, in order (i grows with _tp_sn). */
async function tailRows(sql: string, expectedSql: (from: number) => string): Promise<void> {
  const execution = await plan(sql);
  const { rows, stop, done } = runCollecting(execution);
  const from = next;
  for (let c = 0; c < 8; c++) await send(5);
  const expected = await q.rows(expectedSql(from));
  assert.ok(expected.length > 0);
  await eventually('every row emitted', async () => rows.length >= expected.length);
  assert.deepEqual(rows, expected, sql);
  stop.abort();
  await done;
}

test('a plain tail reads flat and emits every row, in ingest order', async () => {
  const sql = "SELECT i, k, v * 2 AS w FROM flat_src WHERE v > 0 OR k = 'k1'";
  const execution = await plan(sql);
  assert.ok(isFlat(execution), execution.program.tail?.text);
  assert.match(execution.program.tail?.text ?? '', /ORDER BY _tp_sn/);
  await execution.dispose();
  await tailRows(
    sql,
    (from) =>
      `SELECT i, k, v * 2 AS w FROM table(flat_src) WHERE (v > 0 OR k = 'k1') AND i >= ${from} ORDER BY _tp_sn`,
  );
  await tailRows(
    'SELECT * FROM flat_src',
    (from) => `SELECT * FROM table(flat_src) WHERE i >= ${from} ORDER BY _tp_sn`,
  );
});

test('tails with a clause of their own, a subquery or a name _tp_sn keep the range subquery', async () => {
  for (const sql of [
    'SELECT i AS _tp_sn FROM flat_src',
    'SELECT i FROM flat_src WHERE k IN (SELECT k FROM table(flat_src) WHERE i < 3)',
    'SELECT DISTINCT k FROM flat_src',
    'SELECT i, emit_version() FROM flat_src',
    'SELECT i, array_join([1, 2, 3]) AS x FROM flat_src',
  ]) {
    const execution = await plan(sql);
    assert.equal(isFlat(execution), false, sql);
    await execution.dispose();
  }
  await tailRows(
    'SELECT i AS _tp_sn, k FROM flat_src WHERE v < 0',
    (from) => `SELECT i AS _tp_sn, k FROM table(flat_src) WHERE v < 0 AND i >= ${from} ORDER BY i`,
  );
  // The elements of one row's array stay in order (the engine's sort would not keep them).
  await tailRows(
    'SELECT i, array_join([1, 2, 3]) AS x FROM flat_src WHERE v > 0',
    (from) =>
      `SELECT i, array_join([1, 2, 3]) AS x FROM table(flat_src) WHERE v > 0 AND i >= ${from} ORDER BY i, x`,
  );
});
