/**
 * Tail pacing (issue 12, src/streaming/step-pacing.ts): a live tail coalesces commits that arrive
 * within its step gap into one step, and emits exactly the rows, in the order, it emits with a
 * step per commit. Tails whose rows depend on earlier steps are never paced.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RowsPlan } from '../../src/queries/execution.ts';
import type { SharedStepReads } from '../../src/streaming/shared-step-reads.ts';
import { pacedTail } from '../../src/streaming/step-pacing.ts';
import type { StreamingExecution } from '../../src/streaming/streaming-execution.ts';
import { runCollecting } from '../helpers/collect-rows.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { eventually, SqlCalls } from '../helpers/sql-calls.ts';

let h: Harness;
let shared: SharedStepReads;
const q = new SqlCalls(() => h);
const USER = { username: 'admin', role: 'admin' as const };

before(async () => {
  h = await startHarness();
  const s = h.trb.services.sharedReads;
  assert.ok(s, 'the server shares work between executions');
  shared = s;
  await q.ok('CREATE STREAM paced_src (i int64, k string)');
});
after(() => h.close());

async function plan(sql: string): Promise<StreamingExecution> {
  return (await h.trb.services.planner.plan(sql, { user: USER, type: 'streaming' })) as RowsPlan as never;
}

let next = 1;
async function send(n: number): Promise<void> {
  const data: unknown[][] = [];
  for (let j = 0; j < n; j++, next++) data.push([next, `k${next % 3}`]);
  await q.ingest('paced_src', ['i', 'k'], data);
}

/**
 * Run a tail over `paced_src` without rows of key `skip` under `pacing` while `commits` commits
 * of 3 rows arrive: every row is emitted in ingest order; answers the tail steps taken.
 */
async function pacedRun(
  pacing: Partial<typeof shared.pacing>,
  skip: string,
  commits: number,
): Promise<number> {
  const saved = { ...shared.pacing };
  Object.assign(shared.pacing, pacing);
  try {
    const sql = `SELECT i, k FROM paced_src WHERE k != '${skip}'`;
    const execution = await plan(sql);
    assert.ok(pacedTail(execution.program));
    const { rows, stop, done } = runCollecting(execution);
    const from = next;
    for (let c = 0; c < commits; c++) await send(3);
    const expected = await q.rows(
      `SELECT i, k FROM table(paced_src) WHERE k != '${skip}' AND i >= ${from} ORDER BY _tp_sn`,
    );
    assert.equal(expected.length, commits * 2);
    await eventually('every row emitted', async () => rows.length >= expected.length);
    assert.deepEqual(
      rows.map((r) => [Number(r[0]), r[1]]),
      expected.map((r) => [Number(r[0]), r[1]]),
    );
    const steps = execution.stepCalls().Tail ?? 0;
    stop.abort();
    await done;
    return steps;
  } finally {
    Object.assign(shared.pacing, saved);
  }
}

test('commits arriving within the gap are one step; the rows are every row, in ingest order', async () => {
  // A gap far longer than ten back-to-back ingests take: after the first step (the stream was
  // quiet), the other commits wait for one step.
  const steps = await pacedRun({ maxGapMs: 3000, costRatio: 1e6, maxPendingRows: 1e9 }, 'k1', 10);
  assert.ok(steps < 10, `10 commits took ${steps} tail steps`);
});

test('holding back a share of commits (late share) emits every row, in ingest order, in no more steps', async () => {
  // Half the commits may be held, each until the next commit or 2 commit intervals (at most 3 s).
  const steps = await pacedRun(
    { maxGapMs: 0, lateShare: 0.5, maxHoldMs: 3000, maxPendingRows: 1e9 },
    'k2',
    12,
  );
  assert.ok(steps <= 12, `12 commits took ${steps} tail steps`);
});

test('tails whose rows depend on earlier steps are not paced', async () => {
  assert.ok(pacedTail((await plan('SELECT i FROM paced_src WHERE i > 0')).program));
  for (const sql of [
    'SELECT i, emit_version() FROM paced_src',
    'SELECT i, lag(i) FROM paced_src',
    'SELECT i FROM dedup(paced_src, k)',
  ]) {
    const execution = await plan(sql);
    assert.equal(pacedTail(execution.program), false, sql);
    await execution.dispose();
  }
});
