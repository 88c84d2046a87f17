/**
 * The periodic timer of a streaming aggregation counts from when the query was planned, not from
 * when its execution got its engine tables ready and read its backfill (Proton arms the timer when
 * it builds the pipeline; after a backfill it emits at once only if a tick fell due meanwhile).
 * 0027_table_func_changelog id 12 depends on it: a view's first 2 s emit of its backfilled groups
 * must come before an insert made 2 s after the query was accepted.
 *
 * The clock is Node's mocked `Date` (timers stay real): planned at t, run at t + 1 h with
 * `EMIT PERIODIC 1h`, the first tick is due as soon as the backfill is read. Counted from the run
 * instead, it would be an hour away and the test would time out.
 */
import assert from 'node:assert/strict';
import { after, before, mock, test } from 'node:test';
import type { Services } from '../../src/api/services.ts';
import { StreamingExecution } from '../../src/streaming/streaming-execution.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { ADMIN_USER, runStatement } from '../helpers/services-sql.ts';

let h: Harness;
let s: Services;
const exec = (sql: string) => runStatement(s, sql);

before(async () => {
  h = await startHarness();
  s = h.trb.services;
  await exec('CREATE STREAM po (k string, v int32)');
  await exec("INSERT INTO po (k, v) VALUES ('a', 1), ('b', 2), ('a', 3)");
});
after(async () => {
  await h.close();
});

async function firstEmit(sql: string): Promise<string[]> {
  mock.timers.enable({ apis: ['Date'], now: Date.now() });
  const controller = new AbortController();
  let running: Promise<void> | undefined;
  try {
    const planned = await s.planner.plan(sql, { user: ADMIN_USER, type: 'streaming' });
    assert.ok(planned instanceof StreamingExecution);
    mock.timers.tick(3_600_000);
    const rows: string[] = [];
    let failed: unknown;
    running = planned
      .run({ rows: (r: readonly string[]) => void rows.push(...r) }, controller.signal)
      .catch((e) => {
        failed = e;
      });
    // Real timers: poll until the first emit (or fail after 30 s).
    for (let waited = 0; rows.length === 0; waited += 10) {
      if (failed) throw failed;
      if (waited > 30_000) assert.fail('no periodic emit after the backfill: the timer counted from the run');
      await new Promise((r) => setTimeout(r, 10));
    }
    return rows.map((r) => JSON.stringify(JSON.parse(r))).sort();
  } finally {
    controller.abort();
    await running;
    mock.timers.reset();
  }
}

test('a periodic aggregation planned a period ago emits its backfilled groups as soon as the backfill is read', async () => {
  const rows = await firstEmit(
    'SELECT k, count(), sum(v) FROM po WHERE _tp_time > earliest_ts() GROUP BY k EMIT PERIODIC 1h',
  );
  // a: 2 rows (1 + 3), b: 1 row (2).
  assert.deepEqual(rows, [JSON.stringify(['a', 2, 4]), JSON.stringify(['b', 1, 2])].sort());
});

test("a nested aggregation (a view over changelog()) counts from its outer query's planning", async () => {
  await exec(
    'CREATE VIEW po_v AS SELECT k, count() AS c FROM po WHERE _tp_time > earliest_ts() GROUP BY k EMIT PERIODIC 1h',
  );
  const rows = await firstEmit('SELECT k, c, _tp_delta FROM changelog(po_v, k)');
  assert.deepEqual(rows, [JSON.stringify(['a', 2, 1]), JSON.stringify(['b', 1, 1])].sort());
});
