/**
 * Shared reads (issue 12): executions running the same tail over the same stream read each
 * committed range once (src/streaming/shared-step-reads.ts), and each still gets exactly its rows.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { eventually, SqlCalls } from '../helpers/sql-calls.ts';
import { StreamingApi } from '../helpers/streaming-client.ts';

let h: Harness;
const q = new SqlCalls(() => h);

before(async () => {
  h = await startHarness();
  await q.ok('CREATE STREAM shared_src (i int64, k string)');
});
after(() => h.close());

const count = async (sql: string) => Number((await q.rows(sql))[0]?.[0]);

/** Wait until view `name` holds `n` rows; on timeout say what it holds and how it stands. */
async function holds(name: string, n: number): Promise<void> {
  const mvs = h.trb.services.mvs;
  let seen = -1;
  try {
    await eventually(`${name} complete`, async () => {
      seen = await count(`SELECT count() FROM table(${name})`);
      return seen === n;
    });
  } catch (e) {
    const s = mvs.state(mvs.require('default', name));
    const shared = h.trb.services.sharedReads;
    assert.fail(
      `${(e as Error).message}: holds ${seen} of ${n}; status ${s.status}, last error ${JSON.stringify(s.lastError)}, shared hits ${shared?.hits} reads ${shared?.reads} kept ${shared?.kept}`,
    );
  }
}

async function running(name: string): Promise<void> {
  const mvs = h.trb.services.mvs;
  await eventually(
    `${name} running`,
    async () => mvs.state(mvs.require('default', name)).status === 'ExecutingPipeline',
  );
}

async function send(from: number, to: number): Promise<void> {
  const data: unknown[][] = [];
  for (let i = from; i <= to; i++) data.push([i, `k${i % 3}`]);
  await q.ingest('shared_src', ['i', 'k'], data);
}

test('identical tail views share their reads; each target holds exactly the historical result', async () => {
  const select = 'SELECT i, k FROM shared_src WHERE i % 2 = 0';
  for (const name of ['sh_a', 'sh_b']) {
    await q.ok(`CREATE MATERIALIZED VIEW ${name} AS ${select}`);
    await running(name);
  }
  // A view with another filter runs alone (its step SQL differs).
  await q.ok('CREATE MATERIALIZED VIEW sh_other AS SELECT i FROM shared_src WHERE i % 2 = 1');
  await running('sh_other');
  for (let b = 0; b < 10; b++) await send(b * 10 + 1, b * 10 + 10);
  // A third identical view joins later, at another position: it steps up to the others' ranges.
  await q.ok(`CREATE MATERIALIZED VIEW sh_c AS ${select}`);
  await running('sh_c');
  const cStart = await count('SELECT count() FROM table(shared_src)');
  for (let b = 10; b < 20; b++) await send(b * 10 + 1, b * 10 + 10);

  const expected = await q.rows(`${select.replace('FROM shared_src', 'FROM table(shared_src)')} ORDER BY i`);
  assert.equal(expected.length, 100);
  for (const name of ['sh_a', 'sh_b']) {
    await holds(name, 100);
    assert.deepEqual(await q.rows(`SELECT i, k FROM table(${name}) ORDER BY i`), expected);
  }
  const late = expected.filter((r) => Number(r[0]) > cStart);
  await holds('sh_c', late.length);
  assert.deepEqual(await q.rows('SELECT i, k FROM table(sh_c) ORDER BY i'), late);
  await holds('sh_other', 100);

  const shared = h.trb.services.sharedReads;
  assert.ok(shared, 'the server has shared reads');
  assert.ok(
    shared.hits > 0,
    `some steps took another view's read (hits ${shared.hits}, reads ${shared.reads})`,
  );
  // Nothing stays kept once every view has taken a result; no group outlives its views.
  for (const name of ['sh_a', 'sh_b', 'sh_c', 'sh_other']) await q.ok(`DROP VIEW ${name}`);
  assert.equal(shared.kept, 0);
});

test('views sharing a stream step together: commits arriving within the gap land in one step each', async () => {
  const shared = h.trb.services.sharedReads;
  assert.ok(shared, 'the server has shared reads');
  const saved = { ...shared.groupPacing };
  // A gap far longer than the burst below takes, so the test does not depend on timing.
  shared.groupPacing = { maxGapMs: 60_000, costRatio: 1_000_000 };
  const select = 'SELECT i, k FROM shared_src WHERE i > 5000';
  const names = ['gp_a', 'gp_b', 'gp_c'];
  try {
    for (const name of names) {
      await q.ok(`CREATE MATERIALIZED VIEW ${name} AS ${select}`);
      await running(name);
    }
    const mvs = h.trb.services.mvs;
    const written = (name: string) => mvs.state(mvs.require('default', name)).written;
    // The first commit after a quiet time is stepped over at once, by every view.
    await send(5001, 5010);
    for (const name of names) await holds(name, 10);
    assert.deepEqual(
      names.map((n) => written(n).writes),
      [1, 1, 1],
    );
    // Nine more commits within the gap: the views wait for it (nothing more written yet)...
    for (let b = 1; b < 10; b++) await send(5000 + b * 10 + 1, 5000 + b * 10 + 10);
    assert.deepEqual(
      names.map((n) => written(n).rows),
      [10, 10, 10],
    );
    // ...then step together over all of them once it is cut short (a shorter gap).
    shared.groupPacing = { maxGapMs: 1, costRatio: 1 };
    await send(5101, 5110);
    const expected = await q.rows(
      `${select.replace('FROM shared_src', 'FROM table(shared_src)')} ORDER BY i`,
    );
    assert.equal(expected.length, 110);
    for (const name of names) {
      await holds(name, 110);
      assert.deepEqual(await q.rows(`SELECT i, k FROM table(${name}) ORDER BY i`), expected);
      // The 10 commits after the first came in at most two more writes, not ten.
      assert.ok(written(name).writes <= 3, `${name}: ${written(name).writes} writes`);
    }
  } finally {
    shared.groupPacing = saved;
    for (const name of names) await q.ok(`DROP VIEW IF EXISTS ${name}`);
  }
});

test('a streaming query shows each source committed vs processed in its pipeline and metrics', async () => {
  const api = await StreamingApi.attach(h);
  const query = await api.start('SELECT i FROM shared_src WHERE i > 1000');
  const committed = () => h.trb.services.streams.committedSn('default', 'shared_src');
  await send(1001, 1005);
  await query.waitForRows(5);
  const r = await api.get(`/v1beta2/queries/${query.id}/pipeline`);
  const pipeline = (await r.json()) as {
    nodes: Array<{ id: number; name: string; metric: Record<string, number> }>;
    edges: Array<{ from: number; to: number }>;
  };
  const source = pipeline.nodes.find((n) => n.name === 'Source default.shared_src');
  assert.ok(source, JSON.stringify(pipeline));
  assert.equal(source.metric.committed_sn, committed());
  assert.equal(source.metric.processed_sn, committed());
  assert.equal(source.metric.lag, 0);
  assert.ok(pipeline.edges.some((e) => e.from === source.id));
  // The metrics event (every second) carries the same positions.
  await eventually('metrics with lag', async () => {
    const m = query.metrics.at(-1) as { lag?: Array<Record<string, unknown>> } | undefined;
    return m?.lag?.[0]?.processed_sn === committed();
  });
  const m = query.metrics.at(-1) as unknown as { lag: Array<Record<string, unknown>> };
  assert.deepEqual(m.lag, [
    { stream: 'default.shared_src', committed_sn: committed(), processed_sn: committed(), lag: 0 },
  ]);
  await query.cancel();
});
