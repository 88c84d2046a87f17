/**
 * What many streaming queries cost (issue 12), with results unchanged:
 * - identical queries run once (src/streaming/shared-runs.ts): a query whose program equals a
 *   running one's and that starts where that run stands joins it; every member gets exactly the
 *   rows it would have computed alone, a member that leaves does not stop the others, and a query
 *   that would not get the same rows (another start, another SQL) runs alone;
 * - an aggregation emitting on its period folds at the tick, not at every commit;
 * - a due periodic emit runs while commits keep arriving.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RowsPlan } from '../../src/queries/execution.ts';
import type { SharedRuns } from '../../src/streaming/shared-runs.ts';
import { runCollecting } from '../helpers/collect-rows.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { eventually, SqlCalls } from '../helpers/sql-calls.ts';

let h: Harness;
let runs: SharedRuns;
const q = new SqlCalls(() => h);
const USER = { username: 'admin', role: 'admin' as const };

before(async () => {
  h = await startHarness();
  const shared = h.trb.services.sharedReads;
  assert.ok(shared, 'the server shares work between executions');
  runs = shared.runs;
  await q.ok("CREATE STREAM same_src (i int64, k string, t datetime64(3, 'UTC'))");
});
after(() => h.close());

/** A running streaming query collecting its rows. */
interface Client {
  rows: unknown[][];
  stop: AbortController;
  done: Promise<void>;
  plan: RowsPlan;
}

async function start(sql: string, sink?: (rows: readonly string[]) => void): Promise<Client> {
  const plan = (await h.trb.services.planner.plan(sql, { user: USER, type: 'streaming' })) as RowsPlan;
  return { ...runCollecting(plan, sink), plan };
}

let next = 1;
/** Rows i = next.., one second of event time apart, keys k0..k2. */
async function send(n: number): Promise<void> {
  const data: unknown[][] = [];
  for (let j = 0; j < n; j++, next++)
    data.push([next, `k${next % 3}`, new Date(Date.UTC(2026, 0, 1) + next * 1000).toISOString()]);
  await q.ingest('same_src', ['i', 'k', 't'], data);
}

const sorted = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort();

test('identical window aggregations started at one position run once; each client gets every window', async () => {
  const sql = 'SELECT window_end, count() AS c, max(i) AS m FROM tumble(same_src, t, 5s) GROUP BY window_end';
  const before = { joined: runs.joined, running: runs.running };
  const a = await start(sql);
  const b = await start(sql);
  const c = await start(sql);
  // Another SQL runs alone.
  const other = await start(sql.replace('max(i)', 'min(i)'));
  assert.equal(runs.joined - before.joined, 2, 'b and c joined a');
  assert.equal(runs.running - before.running, 2, 'one run for a/b/c, one for the other query');
  for (let s = 0; s < 6; s++) await send(7);
  await eventually('windows emitted', async () => a.rows.length >= 7 && other.rows.length >= 7);
  // The one client that leaves stops nothing: the others keep getting windows.
  a.stop.abort();
  await a.done;
  const seen = b.rows.length;
  for (let s = 0; s < 3; s++) await send(7);
  await eventually('windows after a left', async () => c.rows.length > seen);
  assert.ok(a.rows.length <= seen);
  assert.deepEqual(sorted(b.rows), sorted(c.rows));
  assert.deepEqual(sorted(a.rows), sorted(b.rows.slice(0, a.rows.length)));
  // Every window b got is the historical result over the same rows.
  for (const row of b.rows) {
    const [end, count, max] = row as [string, number, number];
    const [h] = await q.rows(
      `SELECT count(), max(i) FROM table(same_src) WHERE t >= to_datetime64('${end}', 3, 'UTC') - interval 5 second AND t < to_datetime64('${end}', 3, 'UTC')`,
    );
    assert.deepEqual([Number(count), Number(max)], [Number(h?.[0]), Number(h?.[1])], `window ${end}`);
  }
  // b's progress is the shared run's.
  assert.equal(b.plan.progress().sources?.[0]?.processedSn, a.plan.progress().sources?.[0]?.processedSn);
  for (const cl of [b, c, other]) cl.stop.abort();
  await Promise.all([b.done, c.done, other.done]);
  await eventually('runs stopped', async () => runs.running === before.running);
});

test('an aggregation planned after an identical one has read rows runs alone (its own start)', async () => {
  const sql = 'SELECT count() AS c FROM same_src EMIT PERIODIC 200ms';
  const before = runs.joined;
  const first = await start(sql);
  await send(10);
  await eventually('first counted', async () => first.rows.some((r) => Number(r[0]) === 10));
  const second = await start(sql);
  assert.equal(runs.joined, before, 'the second query starts after rows the first counted');
  await send(5);
  await eventually('both counted', async () => {
    return first.rows.some((r) => Number(r[0]) === 15) && second.rows.some((r) => Number(r[0]) === 5);
  });
  for (const cl of [first, second]) cl.stop.abort();
  await Promise.all([first.done, second.done]);
});

test('a tail joins an identical tail standing at its start; a failing client fails alone', async () => {
  const sql = "SELECT i, k FROM same_src WHERE k != 'k1'";
  const before = runs.joined;
  const first = await start(sql);
  await send(9);
  await eventually('first tail rows', async () => first.rows.length === 6);
  // The first tail is caught up: a new identical tail starts exactly where it stands.
  const second = await start(sql);
  const failing = await start(sql, () => {
    throw new Error('client went away');
  });
  assert.equal(runs.joined - before, 2);
  await send(9);
  await assert.rejects(failing.done, /client went away/);
  await eventually('tails after the join', async () => first.rows.length === 12 && second.rows.length === 6);
  assert.deepEqual(second.rows, first.rows.slice(6));
  for (const cl of [first, second]) cl.stop.abort();
  await Promise.all([first.done, second.done]);
});

test('an aggregation emitting on its period folds what is pending at the tick, not at every commit', async () => {
  const sql = 'SELECT k, count() AS c, max(i) AS m FROM same_src GROUP BY k EMIT PERIODIC 5s';
  const client = await start(sql);
  const from = next;
  // Ten commits well inside one period.
  for (let s = 0; s < 10; s++) await send(3);
  await eventually('the tick emitted', async () => client.rows.length >= 3, 30_000);
  const calls = (client.plan as unknown as { stepCalls(): Record<string, number> }).stepCalls();
  assert.ok((calls.Aggregate ?? 0) < 10, `folds: ${JSON.stringify(calls)}`);
  const expected = await q.rows(
    `SELECT k, count(), max(i) FROM table(same_src) WHERE i >= ${from} GROUP BY k ORDER BY k`,
  );
  const got = client.rows.slice(-3).map((r) => [r[0], Number(r[1]), Number(r[2])]);
  got.sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  assert.deepEqual(
    got,
    expected.map((r) => [r[0], Number(r[1]), Number(r[2])]),
  );
  client.stop.abort();
  await client.done;
});

test('a periodic emit runs while commits keep arriving (one step, then the emit)', async () => {
  const client = await start('SELECT count() AS c FROM same_src EMIT PERIODIC 100ms');
  let writing = true;
  let sent = 0;
  let emitsWhileWriting = 0;
  const writer = (async () => {
    while (writing) {
      await send(5);
      sent += 5;
    }
  })();
  await eventually('emits while rows keep coming', async () => {
    emitsWhileWriting = client.rows.length;
    return emitsWhileWriting >= 3;
  });
  writing = false;
  await writer;
  assert.ok(emitsWhileWriting >= 3);
  await eventually('the last emit counts every row', async () => Number(client.rows.at(-1)?.[0]) === sent);
  client.stop.abort();
  await client.done;
});
