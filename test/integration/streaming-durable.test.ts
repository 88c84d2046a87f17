/**
 * Durable streaming executions (src/streaming/durability.ts): a run stopped abruptly at several
 * points (a throw in the middle of an event's hand-overs, a throw right after an event was
 * journaled, with checkpoints after every event or only the first) and resumed by a new
 * execution over the same checkpoint store hands over, once the consumer drops what it already
 * took, exactly what an uninterrupted run hands over: tail (WHERE, projection, lag()), dedup(),
 * global aggregations (PERIODIC, ON UPDATE, CHANGELOG), tumble and hop windows (watermark,
 * ON UPDATE, PERIODIC, after a backfill), session windows.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Services } from '../../src/api/services.ts';
import { checkpointsDir } from '../../src/streaming/checkpoint/file-checkpoint-store.ts';
import { durabilityRefusal } from '../../src/streaming/durability-refusal.ts';
import { StreamingExecution } from '../../src/streaming/streaming-execution.ts';
import { type DriveOptions, drive } from '../helpers/durable-driver.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { ADMIN_USER, runStatement } from '../helpers/services-sql.ts';

let h: Harness;
let s: Services;
/** The last committed `_tp_sn` after each insert batch. */
const boundaries: number[] = [];
const exec = (sql: string) => runStatement(s, sql);

before(async () => {
  h = await startHarness();
  s = h.trb.services;
  await exec(
    "CREATE STREAM dur (id string, k string, v int32, t datetime64(3, 'UTC')) SETTINGS event_time_column='t'",
  );
  // 10 batches; event time mostly rising by 1s per row, a late row now and then, keys a-c.
  let n = 0;
  for (let b = 0; b < 10; b++) {
    const rows: string[] = [];
    for (let i = 0; i < 6; i++) {
      const late = i === 3 && b % 3 === 2;
      const sec = late ? n - 7 : n;
      const ts = new Date(Date.UTC(2024, 0, 1, 0, 0, 0) + sec * 1000)
        .toISOString()
        .replace('T', ' ')
        .slice(0, 23);
      rows.push(`('r${n}', '${'abc'[n % 3]}', ${(n * 7) % 11}, '${ts}')`);
      n++;
    }
    // Duplicate ids for dedup(): every batch repeats an id of the previous one.
    if (b > 0) rows.push(`('r${n - 8}', 'a', 99, '2024-01-01 00:00:00')`);
    await exec(`INSERT INTO dur (id, k, v, t) VALUES ${rows.join(', ')}`);
    boundaries.push(s.streams.committedSn('default', 'dur'));
  }
});
after(async () => {
  await h.close();
});

let owners = 0;
async function equivalent(sql: string, periodic = false, backfill = false): Promise<void> {
  // With `backfill`, the first three batches are committed before the query starts.
  const base = backfill
    ? { sql, boundaries: boundaries.slice(3), periodic, initial: boundaries[2]! }
    : { sql, boundaries, periodic };
  const run = (o: Partial<DriveOptions>) =>
    drive(s, { ...base, checkpointIntervalMs: 0, owner: `t${++owners}`, ...o } as DriveOptions);
  const reference = await run({ checkpointIntervalMs: 0 });
  assert.equal(reference.restarts, 0);
  assert.ok(reference.taken.length > 0, `the query hands over rows: ${sql}`);
  const scenarios: Array<Partial<DriveOptions> & { name: string }> = [
    // A checkpoint after every event: a crash replays at most the event it interrupted.
    { name: 'checkpoint per event', checkpointIntervalMs: 0, crashAtHandover: [2], crashAfterAppend: [5, 9] },
    // Only checkpoint 0: every restart replays the whole journal.
    {
      name: 'journal only',
      checkpointIntervalMs: 3_600_000,
      crashAfterAppend: [3, 12],
      crashAtHandover: [4, 7],
    },
  ];
  for (const sc of scenarios) {
    const r = await run(sc);
    assert.ok(r.restarts >= 1, `${sc.name}: at least one crash happened`);
    assert.deepEqual(r.taken, reference.taken, `${sc.name}: ${sql}`);
  }
}

test('tail with WHERE, projection and lag(): crash and resume hand over exactly the uninterrupted output', async () => {
  await equivalent(
    "SELECT id, v * 2 AS v2, lag(v) AS pv, concat(k, '!') AS kk FROM dur WHERE v % 3 != 0 SETTINGS seek_to='earliest'",
  );
});

test('dedup(): the kept keys survive a crash', async () => {
  await equivalent("SELECT id, v FROM dedup(dur, id) SETTINGS seek_to='earliest'");
});

test('global aggregation EMIT PERIODIC, grouped', async () => {
  await equivalent(
    "SELECT k, count() AS c, sum(v) AS s, max(id) AS m FROM dur GROUP BY k EMIT PERIODIC 100ms SETTINGS seek_to='earliest'",
    true,
  );
});

test('global aggregation EMIT ON UPDATE', async () => {
  await equivalent(
    "SELECT k, count() AS c, min(v) AS lo FROM dur GROUP BY k EMIT ON UPDATE SETTINGS seek_to='earliest'",
  );
});

test('global aggregation EMIT CHANGELOG: retractions of the last emitted rows survive a crash', async () => {
  await equivalent(
    "SELECT k, sum(v) AS s FROM dur GROUP BY k EMIT CHANGELOG PERIODIC 100ms SETTINGS seek_to='earliest'",
    true,
  );
});

test('tumble window closed by the watermark (late rows dropped), with emit_version()', async () => {
  await equivalent(
    "SELECT window_start, k, count() AS c, sum(v) AS s, emit_version() AS ev FROM tumble(dur, t, 5s) GROUP BY window_start, k SETTINGS seek_to='earliest'",
  );
});

test('tumble window after a backfill (watermark muted, then the closed windows at its end)', async () => {
  await equivalent(
    "SELECT window_start, count() AS c, max(id) AS m FROM tumble(dur, t, 3s) GROUP BY window_start SETTINGS seek_to='earliest'",
    false,
    true,
  );
});

test('tumble window EMIT ON UPDATE', async () => {
  await equivalent(
    "SELECT window_start, count() AS c FROM tumble(dur, t, 4s) GROUP BY window_start EMIT ON UPDATE SETTINGS seek_to='earliest'",
  );
});

test('hop window EMIT PERIODIC', async () => {
  await equivalent(
    "SELECT window_start, window_end, max(v) AS m FROM hop(dur, t, 2s, 6s) GROUP BY window_start, window_end EMIT PERIODIC 100ms SETTINGS seek_to='earliest'",
    true,
  );
});

test('session windows: the open sessions and their rows survive a crash', async () => {
  await equivalent(
    "SELECT window_start, window_end, k, count() AS c, max(v) AS m FROM session(dur, t, 2s, 8s) PARTITION BY k GROUP BY window_start, window_end, k SETTINGS seek_to='earliest'",
  );
});

test('session windows EMIT ON UPDATE', async () => {
  await equivalent(
    "SELECT window_start, window_end, count() AS c FROM session(dur, t, 3s) GROUP BY window_start, window_end EMIT ON UPDATE SETTINGS seek_to='earliest'",
  );
});

test('a join of streams (both sides read from where the first run started)', async () => {
  await equivalent(
    "SELECT a.id, b.v AS bv FROM dur AS a JOIN dur AS b ON a.id = b.id AND a.v = b.v SETTINGS seek_to='earliest'",
  );
});

test('a range join (its watermarks and live bounds survive a crash), aggregated ON UPDATE', async () => {
  await equivalent(
    "SELECT a.k, count() AS c FROM dur AS a JOIN dur AS b ON a.k = b.k AND date_diff_within(2s, a.t, b.t) GROUP BY a.k EMIT ON UPDATE SETTINGS seek_to='earliest'",
  );
});

test('a versioned_kv stream read as a stream: its first step (latest row per key) is not redone', async () => {
  await exec("CREATE STREAM dur_kv (k string, v int32) PRIMARY KEY k SETTINGS mode='versioned_kv'");
  await exec("INSERT INTO dur_kv (k, v) VALUES ('a', 1), ('b', 2), ('a', 3)");
  const start = s.streams.committedSn('default', 'dur_kv');
  const kvBoundaries: number[] = [];
  for (let b = 0; b < 8; b++) {
    await exec(`INSERT INTO dur_kv (k, v) VALUES ('${'abc'[b % 3]}', ${b * 10}), ('z', ${b})`);
    kvBoundaries.push(s.streams.committedSn('default', 'dur_kv'));
  }
  const sql = "SELECT k, v FROM dur_kv SETTINGS seek_to='earliest'";
  const base = { sql, boundaries: kvBoundaries, periodic: false, initial: start };
  const reference = await drive(s, { ...base, checkpointIntervalMs: 0, owner: 'kv-ref' });
  assert.ok(reference.taken.length > 0);
  for (const [i, sc] of [
    { checkpointIntervalMs: 0, crashAtHandover: [1, 3], crashAfterAppend: [4] },
    { checkpointIntervalMs: 3_600_000, crashAfterAppend: [2, 6], crashAtHandover: [5] },
  ].entries()) {
    const r = await drive(s, { ...base, ...sc, owner: `kv-${i}` });
    assert.ok(r.restarts >= 1);
    assert.deepEqual(r.taken, reference.taken);
  }
});

test('a durable run saves checkpoint 0 before its first event; a non-durable run writes no checkpoint', async () => {
  const before = await readdir(checkpointsDir(h.dataDir)).catch(() => [] as string[]);
  const plan = await s.planner.plan("SELECT id FROM dur SETTINGS seek_to='earliest'", {
    user: ADMIN_USER,
    type: 'streaming',
  });
  assert.ok(plan instanceof StreamingExecution);
  const rows: string[] = [];
  const controller = new AbortController();
  const running = plan.run(
    {
      rows: (r) => {
        rows.push(...r);
        if (rows.length >= 60) controller.abort();
      },
    },
    controller.signal,
  );
  await running;
  assert.ok(rows.length >= 60);
  const afterRun = await readdir(checkpointsDir(h.dataDir)).catch(() => [] as string[]);
  assert.deepEqual(afterRun, before, 'no checkpoint directory was created');
  const engineTables = (
    await s.engine.query("SELECT count() FROM system.tables WHERE database = '_tributary_checkpoints'")
  ).text();
  const r = await drive(s, {
    sql: "SELECT id FROM dur WHERE v = 0 SETTINGS seek_to='earliest'",
    boundaries: [boundaries[0]!],
    periodic: false,
    checkpointIntervalMs: 3_600_000,
    owner: 'zero',
  });
  assert.ok(r.store.saves >= 1);
  const files = await readdir(join(checkpointsDir(h.dataDir), 'zero'));
  assert.ok(files.includes('checkpoint.json'), files.join(','));
  assert.ok(engineTables.length > 0);
});

test('durabilityRefusal names the shapes a durable run cannot checkpoint', async () => {
  const program = async (sql: string) => {
    const plan = await s.planner.plan(sql, { user: ADMIN_USER, type: 'streaming' });
    assert.ok(plan instanceof StreamingExecution);
    await plan.dispose();
    return plan.program;
  };
  assert.equal(durabilityRefusal(await program('SELECT count() FROM dur')), undefined);
  assert.equal(
    durabilityRefusal(
      await program('SELECT window_start, count() FROM session(dur, t, 5s) GROUP BY window_start'),
    ),
    undefined,
  );
  assert.equal(
    durabilityRefusal(await program('SELECT a.id FROM dur AS a JOIN dur AS b ON a.id = b.id')),
    undefined,
  );
  // table() snapshots are saved with the checkpoints.
  assert.equal(
    durabilityRefusal(await program('SELECT a.id FROM dur AS a JOIN table(dur) AS b ON a.id = b.id')),
    undefined,
  );
  // A join's kept versioned_kv side is rebuilt from the stream at RECOVER.
  const kvJoin = 'SELECT a.id, b.v FROM dur AS a JOIN dur_kv AS b ON a.k = b.k';
  assert.equal(durabilityRefusal(await program(kvJoin)), undefined);
  // Nested queries run durably with nested stores; a store without them cannot.
  const nested = await program('SELECT id FROM (SELECT id, count() AS c FROM dur GROUP BY id) WHERE c > 1');
  assert.equal(durabilityRefusal(nested), undefined);
  assert.match(durabilityRefusal(nested, false) ?? '', /nested streaming query/);
  // A nested query's own refusal is the outer one's.
  const nestedJoin = await program(
    'SELECT id FROM (SELECT a.id AS id, count() AS c FROM dur AS a JOIN dur_kv AS b ON a.k = b.k GROUP BY a.id) WHERE c > 1',
  );
  assert.equal(durabilityRefusal(nestedJoin), undefined);
  assert.match(durabilityRefusal(nestedJoin, false) ?? '', /nested streaming query/);
});
