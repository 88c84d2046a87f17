/**
 * Distinct tails of one stream stepping together read in one engine call
 * (src/streaming/combined-tail-reads.ts): each tail still gets exactly its rows, in order, typed as
 * its own call writes them; a tail whose SQL fails on the rows fails alone.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RowsPlan } from '../../src/queries/execution.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { eventually, SqlCalls } from '../helpers/sql-calls.ts';

let h: Harness;
const q = new SqlCalls(() => h);
const USER = { username: 'admin', role: 'admin' as const };

before(async () => {
  h = await startHarness();
  await q.ok(
    "CREATE STREAM comb_src (i int64, k string, v float64, t datetime64(3, 'UTC'), n nullable(int32), a array(string))",
  );
});
after(() => h.close());

interface Client {
  rows: string[];
  stop: AbortController;
  done: Promise<void>;
}

async function start(sql: string): Promise<Client> {
  const plan = (await h.trb.services.planner.plan(sql, { user: USER, type: 'streaming' })) as RowsPlan;
  const rows: string[] = [];
  const stop = new AbortController();
  return { rows, stop, done: plan.run({ rows: (batch) => void rows.push(...batch) }, stop.signal) };
}

test('distinct tails of one stream read together; each gets exactly its own rows in order', async () => {
  const shared = h.trb.services.sharedReads;
  assert.ok(shared);
  const before = shared.combined.calls;
  const sqls = [
    "SELECT i, k, v FROM comb_src WHERE k = 'k0'",
    "SELECT i, t, n, a FROM comb_src WHERE k = 'k1'",
    'SELECT i, k, i * 2 AS d, v / 0 AS inf, nan AS x FROM comb_src WHERE i % 5 = 0',
    "SELECT * FROM comb_src WHERE k != 'k2'",
  ];
  const clients = await Promise.all(sqls.map(start));
  for (let b = 0; b < 5; b++) {
    const data: unknown[][] = [];
    for (let j = 1; j <= 20; j++) {
      const i = b * 20 + j;
      data.push([
        i,
        `k${i % 3}`,
        i / 4,
        new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
        i % 2 ? null : i,
        [`x${i}`, 'tab\there'],
      ]);
    }
    await q.ingest('comb_src', ['i', 'k', 'v', 't', 'n', 'a'], data);
  }
  // The same SQL over the whole stream, as one historical read: each tail's rows, in order.
  const expected: unknown[][][] = [];
  for (const sql of sqls)
    expected.push(await q.rows(`${sql.replace('FROM comb_src', 'FROM table(comb_src)')} ORDER BY i`));
  for (const [i, c] of clients.entries())
    await eventually(`tail ${i} complete`, async () => c.rows.length === expected[i]?.length);
  for (const [i, c] of clients.entries())
    assert.deepEqual(
      c.rows.map((r) => JSON.parse(r) as unknown[]),
      expected[i],
      sqls[i],
    );
  assert.ok(shared.combined.calls > before, 'some steps read together');
  for (const c of clients) c.stop.abort();
  await Promise.all(clients.map((c) => c.done));
});

test('a tail whose SQL fails on the rows fails alone; the others read on', async () => {
  const good = await start('SELECT i FROM comb_src WHERE i > 1000');
  const bad = await start('SELECT i, to_int32(k) AS broken FROM comb_src WHERE i > 1000');
  await q.ingest(
    'comb_src',
    ['i', 'k', 'v', 't', 'n', 'a'],
    [[1001, 'not a number', 0, '2026-01-01 00:00:00', null, []]],
  );
  await assert.rejects(bad.done);
  await eventually('good tail got its row', async () => good.rows.length === 1);
  assert.deepEqual(good.rows, ['[1001]']);
  good.stop.abort();
  await good.done;
});
