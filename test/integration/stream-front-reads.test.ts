/**
 * A hybrid stream's front (issue 12, src/stream/front-range-reads.ts): writes go into a Buffer
 * without destination, reads through a Merge table over it and the MergeTree, and a streaming
 * step whose range lies wholly in the front reads the front alone. Moves of the front into the
 * MergeTree between and during steps lose and double no row; odd stream names keep their own
 * tables; a stream made with the older Buffer layout gets the new tables at start.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { quoteIdent } from '../../src/engine/settings-clause.ts';
import type { RowsPlan } from '../../src/queries/execution.ts';
import { runCollecting } from '../helpers/collect-rows.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { eventually, SqlCalls } from '../helpers/sql-calls.ts';

let h: Harness;
const q = new SqlCalls(() => h);
const USER = { username: 'admin', role: 'admin' as const };

before(async () => {
  h = await startHarness();
});
after(() => h.close());

async function engineText(sql: string): Promise<string> {
  return (await h.trb.services.engine.query(sql, { format: 'TSVRaw' })).text().trim();
}

/** Every step's SQL as the engine got it, while `fn` runs. */
async function resolvedSteps<T>(fn: () => Promise<T>): Promise<{ value: T; sql: string[] }> {
  const streams = h.trb.services.streams;
  const original = streams.resolveFrontRanges;
  const sql: string[] = [];
  streams.resolveFrontRanges = (text: string) => {
    const out = original.call(streams, text);
    sql.push(out);
    return out;
  };
  try {
    return { value: await fn(), sql };
  } finally {
    streams.resolveFrontRanges = original;
  }
}

test('the engine tables of a hybrid stream: a Merge table over a front Buffer and the MergeTree', async () => {
  await q.ok('CREATE STREAM front_tables (i int64, s string)');
  const rows = await engineText(
    "SELECT name, engine FROM system.tables WHERE database = 'default' AND name LIKE '%front_tables' ORDER BY name",
  );
  assert.equal(
    rows,
    '.tp_front.front_tables\tBuffer\n.tp_history.front_tables\tMergeTree\nfront_tables\tMerge',
  );
  await q.ingest('front_tables', ['i', 's'], [[1, 'a']]);
  assert.equal(await engineText('SELECT count() FROM default.`.tp_front.front_tables`'), '1');
  await h.trb.services.streams.flush('default', 'front_tables');
  assert.equal(await engineText('SELECT count() FROM default.`.tp_front.front_tables`'), '0');
  assert.equal(await engineText('SELECT count() FROM default.`.tp_history.front_tables`'), '1');
  await q.ingest('front_tables', ['i', 's'], [[2, 'b']]);
  // Diagnostics say where the write path stands: all answered, the second row in the front.
  const d = h.trb.services.streams.diagnostics('default', 'front_tables') as {
    writer: { queued: number; unsettled: number };
    engineWritesQueued: number;
    front: { fromSn: number; lastInsertedSn: number; readers: number; readsHeldBack: boolean };
    ingestGate: { inside: number; closed: boolean };
  };
  assert.deepEqual(
    [d.writer.queued, d.writer.unsettled, d.engineWritesQueued, d.front.fromSn, d.front.lastInsertedSn],
    [0, 0, 0, 1, 1],
  );
  assert.deepEqual([d.front.readers, d.front.readsHeldBack], [0, false]);
  assert.deepEqual(d.ingestGate, { inside: 0, closed: false });
  assert.deepEqual(await q.rows('SELECT i, s, _tp_sn FROM table(front_tables) ORDER BY i'), [
    [1, 'a', 0],
    [2, 'b', 1],
  ]);
  // PREWHERE, which a Merge table over a Buffer refuses, selects what WHERE selects.
  assert.deepEqual(await q.rows("SELECT i FROM table(front_tables) PREWHERE i > 1 WHERE s != ''"), [[2]]);
  assert.deepEqual(await q.rows('SELECT i FROM table(front_tables) PREWHERE i < 2'), [[1]]);
});

test('a tail reads the front alone while its range is there, and every row once, in order, across moves', async () => {
  await q.ok('CREATE STREAM front_tail (i int64, v float64)');
  await q.ingest('front_tail', ['i', 'v'], [[0, 1]]);
  await h.trb.services.streams.flush('default', 'front_tail');
  const { value: rows, sql } = await resolvedSteps(async () => {
    const plan = (await h.trb.services.planner.plan('SELECT i FROM front_tail WHERE v > 0', {
      user: USER,
      type: 'streaming',
    })) as RowsPlan;
    const run = runCollecting(plan);
    const expected: unknown[][] = [];
    for (let c = 1; c <= 30; c++) {
      const data = Array.from({ length: 5 }, (_, j) => [c * 10 + j, j % 2 === 0 ? 1 : -1]);
      for (const [i, v] of data) if ((v as number) > 0) expected.push([i]);
      await q.ingest('front_tail', ['i', 'v'], data);
      // Moves between commits, and some while the tail may be stepping.
      if (c % 3 === 0) await h.trb.services.streams.flush('default', 'front_tail');
      else if (c % 5 === 0) void h.trb.services.streams.flush('default', 'front_tail');
    }
    await eventually('every row emitted', async () => run.rows.length >= expected.length);
    await new Promise((r) => setTimeout(r, 300));
    run.stop.abort();
    await run.done;
    assert.deepEqual(run.rows, expected);
    return run.rows;
  });
  assert.ok(rows.length === 90);
  const stepsReading = sql.filter((s) => s.includes('front_tail'));
  assert.ok(
    stepsReading.some((s) => s.includes('`default`.`.tp_front.front_tail`')),
    'some steps read the front alone',
  );
  assert.ok(
    stepsReading.every((s) => !s.includes('/*tp_range:')),
    'no marker reaches the engine',
  );
  // A tail that starts from the beginning reads rows that are in the MergeTree through the Merge table.
  const { sql: earliest } = await resolvedSteps(async () => {
    const plan = (await h.trb.services.planner.plan(
      "SELECT count() FROM front_tail WHERE v > 0 EMIT PERIODIC 100ms SETTINGS seek_to = 'earliest'",
      { user: USER, type: 'streaming' },
    )) as RowsPlan;
    const run = runCollecting(plan);
    await eventually('the count of all rows', async () => run.rows.some((r) => r[0] === 91));
    run.stop.abort();
    await run.done;
  });
  assert.ok(earliest.some((s) => s.includes('`default`.`front_tail`') && !s.includes('.tp_front.')));
});

test('odd stream names keep their own tables: dots, quotes, pattern characters, UTF-8', async () => {
  for (const name of ['a.b', "we'ird", 'x)y$|(z', 'a.b.c', 'ünï ✓']) {
    const ident = quoteIdent(name);
    await q.ok(`CREATE STREAM ${ident} (i int64)`);
    await h.trb.services.streams.ingest('default', name, { columns: ['i'], rows: [[1], [2]] });
    await h.trb.services.streams.flush('default', name);
    await h.trb.services.streams.ingest('default', name, { columns: ['i'], rows: [[3]] });
    assert.deepEqual(await q.rows(`SELECT sum(i), count() FROM table(${ident})`), [[6, 3]], name);
  }
  // `a.b` does not read `a.b.c`'s tables, nor the other way round.
  assert.deepEqual(await q.rows('SELECT count() FROM table(`a.b`)'), [[3]]);
});

test('a stream made with the older Buffer layout gets the front and Merge tables at start, its rows kept', async () => {
  await q.ok('CREATE STREAM front_old (i int64)');
  await q.ingest('front_old', ['i'], [[1], [2]]);
  await h.trb.services.streams.flush('default', 'front_old');
  await q.ingest('front_old', ['i'], [[3]]);
  const columns = await engineText(
    "SELECT create_table_query FROM system.tables WHERE database = 'default' AND name = '.tp_front.front_old'",
  );
  assert.match(columns, /ENGINE = Buffer\('default', '', 1,/);
  h = await h.restart();
  // Put the old layout back (its Buffer empty, as after any restart), then start again.
  const engine = h.trb.services.engine;
  await engine.query('DROP TABLE default.front_old SYNC');
  await engine.query('DROP TABLE default.`.tp_front.front_old` SYNC');
  await engine.query(
    "CREATE TABLE default.front_old (i Int64, _tp_time DateTime64(3, 'UTC'), _tp_sn Int64 MATERIALIZED -1) " +
      "ENGINE = Buffer('default', '.tp_history.front_old', 1, 1000000000, 1000000000, 1000000000000000, 1000000000000000, 1000000000000000000, 1000000000000000000)",
  );
  h = await h.restart();
  assert.equal(
    await engineText("SELECT engine FROM system.tables WHERE database = 'default' AND name = 'front_old'"),
    'Merge',
  );
  assert.deepEqual(await q.rows('SELECT i FROM table(front_old) ORDER BY i'), [[1], [2], [3]]);
  await q.ingest('front_old', ['i'], [[4]]);
  assert.deepEqual(await q.rows('SELECT count() FROM table(front_old)'), [[4]]);
});

test('a move that fails after writing to the MergeTree takes its rows out again: no row is read twice', async () => {
  await q.ok('CREATE STREAM front_fail (i int64)');
  await q.ingest('front_fail', ['i'], [[1], [2]]);
  await h.trb.services.streams.flush('default', 'front_fail');
  await q.ingest('front_fail', ['i'], [[3], [4], [5]]);
  const engine = h.trb.services.engine;
  const query = engine.query;
  let failed = 0;
  engine.query = async (sql, options) => {
    const r = await query.call(engine, sql, options);
    // The move's INSERT runs, then reports a failure as if the connection had dropped after it.
    if (failed === 0 && sql.startsWith('INSERT INTO `default`.`.tp_history.front_fail`')) {
      failed++;
      throw new Error('injected failure after the move wrote its rows');
    }
    return r;
  };
  try {
    await assert.rejects(h.trb.services.streams.flush('default', 'front_fail'), /injected failure/);
  } finally {
    engine.query = query;
  }
  assert.equal(failed, 1);
  assert.deepEqual(await q.rows('SELECT count(), sum(i) FROM table(front_fail)'), [[5, 15]]);
  await h.trb.services.streams.flush('default', 'front_fail');
  assert.deepEqual(await q.rows('SELECT count(), sum(i) FROM table(front_fail)'), [[5, 15]]);
  assert.equal(await engineText('SELECT count() FROM default.`.tp_history.front_fail`'), '5');
});
