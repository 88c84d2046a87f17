/**
 * A global aggregation EMIT ON UPDATE emits once per insert, as Proton emits per block, even when
 * several inserts were committed while its last step ran (0034_emit_mode id 1 sends three inserts
 * back to back and expects three emits). The gate (durable-driver.ts) holds the commits back and
 * releases three at once, so the execution finds three inserts pending at one step.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Services } from '../../src/api/services.ts';
import { storeRanges } from '../../src/streaming/store-ranges.ts';
import { Gate, planOn } from '../helpers/durable-driver.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { runStatement } from '../helpers/services-sql.ts';
import { eventually } from '../helpers/sql-calls.ts';

let h: Harness;
let s: Services;
const exec = (sql: string) => runStatement(s, sql);

before(async () => {
  h = await startHarness();
  s = h.trb.services;
  await exec('CREATE STREAM per_insert (i int32)');
});
after(() => h.close());

async function emitsOf(
  sql: string,
  stream = 'per_insert',
  insert = (i: number) => `INSERT INTO per_insert (i) VALUES (${i})`,
): Promise<unknown[][]> {
  const gate = new Gate(storeRanges(s.streams));
  gate.release(s.streams.committedSn('default', stream));
  const execution = await planOn(s, sql, gate);
  const rows: unknown[][] = [];
  const stop = new AbortController();
  const done = execution.run(
    { rows: (r) => void rows.push(...r.map((x) => JSON.parse(x) as unknown[])) },
    stop.signal,
  );
  try {
    const ends: number[] = [];
    for (const i of [1, 2, 3]) {
      await exec(insert(i));
      ends.push(s.streams.committedSn('default', stream));
    }
    // All three inserts become visible to the query at once, each as its own commit.
    for (const end of ends) gate.release(end);
    await eventually('three emits', async () => rows.length >= 3);
  } finally {
    stop.abort();
    await done;
  }
  return rows;
}

test('global EMIT ON UPDATE: one emit per insert when three inserts are pending at one step', async () => {
  const rows = await emitsOf('SELECT min(i), max(i), count() FROM per_insert EMIT ON UPDATE');
  assert.deepEqual(
    rows.map((r) => r.map(Number)),
    [
      [1, 1, 1],
      [1, 2, 2],
      [1, 3, 3],
    ],
  );
});

test('session EMIT ON UPDATE: the open session after each insert when three inserts are pending at one step', async () => {
  await exec('CREATE STREAM per_insert_s (i int32, t datetime64(3))');
  const rows = await emitsOf(
    'SELECT window_start, min(i), max(i), count() FROM session(per_insert_s, t, 5m) GROUP BY window_start EMIT ON UPDATE',
    'per_insert_s',
    (i) => `INSERT INTO per_insert_s (i, t) VALUES (${i}, '2024-01-24 10:00:0${i * 2}')`,
  );
  assert.deepEqual(
    rows.map((r) => [String(r[0]).slice(0, 19), ...r.slice(1).map(Number)]),
    [
      ['2024-01-24 10:00:02', 1, 1, 1],
      ['2024-01-24 10:00:02', 1, 2, 2],
      ['2024-01-24 10:00:02', 1, 3, 3],
    ],
  );
});
