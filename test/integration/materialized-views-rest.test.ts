import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { eventually, SqlCalls } from '../helpers/sql-calls.ts';

let h: Harness;
const q = new SqlCalls(() => h);

before(async () => {
  h = await startHarness({ tuning: { mvRetry: { baseMs: 50, maxMs: 200 } } });
  await q.ok('CREATE STREAM events (i int64, s string)');
});
after(() => h.close());

type Json = Record<string, unknown>;

async function json(method: 'GET' | 'POST' | 'DELETE' | 'PATCH', path: string, body?: unknown) {
  const r = await h.call(method, path, body === undefined ? {} : { body });
  return { status: r.statusCode, body: (r.body ? r.json() : undefined) as Json };
}

const count = async (sql: string) => Number((await q.rows(sql))[0]?.[0]);

test('create, get, list (expand), stats, pause/resume (sync), delete', async () => {
  const created = await json('POST', '/v1beta2/materialized_views', {
    name: 'rest_mv',
    query: 'SELECT i, s FROM events',
    description: 'from REST',
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.target_stream, 'rest_mv');
  await eventually(
    'running',
    async () =>
      (await json('GET', '/v1beta2/materialized_views/rest_mv')).body.status === 'ExecutingPipeline',
  );
  const got = (await json('GET', '/v1beta2/materialized_views/rest_mv')).body;
  assert.equal(got.description, 'from REST');
  assert.equal(got.query, 'SELECT i, s FROM events');
  assert.match(String(got.create_query), /^CREATE MATERIALIZED VIEW default\.rest_mv AS/);
  assert.deepEqual(
    (got.columns as Json[]).map((c) => [c.name, c.type]),
    [
      ['i', 'int64'],
      ['s', 'string'],
    ],
  );
  assert.equal(got.leader_node, 1);
  assert.equal(got.last_error_message, '');
  const plain = (await json('GET', '/v1beta2/materialized_views')).body as unknown as Json[];
  assert.equal(plain.find((m) => m.name === 'rest_mv')?.status, undefined);
  const listed = await json('GET', '/v1beta2/materialized_views?expand=true');
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  const expanded = listed.body as unknown as Json[];
  const mine = expanded.find((m) => m.name === 'rest_mv') as Json;
  assert.equal(mine.status, 'ExecutingPipeline');
  assert.equal(typeof mine.status_ts, 'number');
  assert.equal(mine.lagging, 0);

  await q.ingest(
    'events',
    ['i', 's'],
    [
      [1, 'a'],
      [2, 'b'],
    ],
  );
  await eventually('rows', async () => (await count('SELECT count() FROM table(rest_mv)')) === 2);
  const stats = (await json('GET', '/v1beta2/materialized_views/rest_mv/stats')).body;
  assert.equal(stats.row_count, 2);
  assert.equal(stats.status, 'ExecutingPipeline');
  const node = (stats.nodes as Json[])[0] as Json;
  assert.equal(node.node_id, 1);
  const lag = (node.lagging_status as Record<string, Json>)['default.events'] as Json;
  assert.equal(lag.end_sn, 1);
  assert.equal(lag.processed_sn, 1);

  assert.equal((await json('POST', '/v1beta2/materialized_views/rest_mv/pause?sync=true')).status, 200);
  assert.equal((await json('GET', '/v1beta2/materialized_views/rest_mv')).body.status, 'Paused');
  await q.ingest('events', ['i', 's'], [[3, 'c']]);
  await eventually(
    'held at the gate',
    async () => h.trb.services.mvs.state(h.trb.services.mvs.require('default', 'rest_mv')).held > 0,
  );
  assert.equal(await count('SELECT count() FROM table(rest_mv)'), 2);
  assert.equal((await json('POST', '/v1beta2/materialized_views/rest_mv/resume?sync=true')).status, 200);
  assert.equal((await json('GET', '/v1beta2/materialized_views/rest_mv')).body.status, 'ExecutingPipeline');
  await eventually('row after resume', async () => (await count('SELECT count() FROM table(rest_mv)')) === 3);

  assert.equal(
    (await json('PATCH', '/v1beta2/materialized_views/rest_mv', { description: 'changed' })).status,
    204,
  );
  assert.equal((await json('GET', '/v1beta2/materialized_views/rest_mv')).body.description, 'changed');
  assert.equal(
    (await json('PATCH', '/v1beta2/materialized_views/rest_mv', { query: 'SELECT i FROM events' })).status,
    400,
  );

  assert.equal((await json('DELETE', '/v1beta2/materialized_views/rest_mv')).status, 204);
  assert.equal((await json('GET', '/v1beta2/materialized_views/rest_mv')).status, 404);
  assert.equal(h.trb.services.streams.get('default', 'rest_mv'), undefined);
});

test('POST /views with materialized and target_stream keeps and answers the target', async () => {
  await q.ok('CREATE STREAM shared_target (i int64)');
  const r = await json('POST', '/v1beta2/views', {
    name: 'via_views',
    query: 'SELECT i FROM events',
    materialized: true,
    target_stream: 'shared_target',
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.materialized, true);
  assert.equal(r.body.target_stream, 'shared_target');
  assert.equal((await json('GET', '/v1beta2/views/via_views')).body.target_stream, 'shared_target');
  assert.equal(
    (await json('GET', '/v1beta2/materialized_views/via_views')).body.target_stream,
    'shared_target',
  );
  // Views and materialized views in the topology, with their edges.
  const topo = (await json('GET', '/v1beta2/topology')).body;
  const edges = (topo.edges as Array<{ source: string; target: string }>).map(
    (e) => `${e.source} -> ${e.target}`,
  );
  assert.ok(edges.includes('stream:default.events -> materialized_view:default.via_views'), edges.join('\n'));
  assert.ok(
    edges.includes('materialized_view:default.via_views -> stream:default.shared_target'),
    edges.join('\n'),
  );
  assert.equal((await json('DELETE', '/v1beta2/views/via_views')).status, 204);
  assert.ok(h.trb.services.streams.get('default', 'shared_target'));
});

test('transfer leader: one node, the target stream shards; a clear 404 otherwise', async () => {
  await json('POST', '/v1beta2/materialized_views', { name: 'moved', query: 'SELECT i FROM events' });
  const t = (body: unknown) => json('POST', '/v1beta2/materialized_views/moved/transfer', body);
  assert.equal((await t({ from: 1, shard: 0, to: 1 })).status, 200);
  const badNode = await t({ from: 1, shard: 0, to: 3 });
  assert.equal(badNode.status, 404);
  assert.match(String(badNode.body.message), /Node 3/);
  const badShard = await t({ from: 1, shard: 1001, to: 1 });
  assert.equal(badShard.status, 404);
  assert.match(String(badShard.body.message), /Shard 1001/);
  assert.equal((await t({ from: 1, to: 1 })).status, 400);
  assert.equal(
    (await json('POST', '/v1beta2/materialized_views/nothing/transfer', { from: 1, shard: 0, to: 1 })).status,
    404,
  );
});

test('bad input over REST: unknown source, unknown target, unknown fields', async () => {
  const r1 = await json('POST', '/v1beta2/materialized_views', {
    name: 'b1',
    query: 'SELECT * FROM missing',
  });
  assert.deepEqual([r1.status, r1.body.code], [404, 60]);
  const r2 = await json('POST', '/v1beta2/materialized_views', {
    name: 'b2',
    query: 'SELECT i FROM events',
    target_stream: 'missing',
  });
  assert.deepEqual([r2.status, r2.body.code], [404, 60]);
  const r3 = await json('POST', '/v1beta2/materialized_views', {
    name: 'b3',
    query: 'SELECT i FROM events',
    x: 1,
  });
  assert.equal(r3.status, 400);
  assert.equal((await json('POST', '/v1beta2/materialized_views/missing/pause')).status, 404);
  assert.equal((await json('GET', '/v1beta2/materialized_views/missing/stats')).status, 404);
  assert.equal(h.trb.services.views.get('default', 'b1'), undefined);
  assert.equal(h.trb.services.streams.get('default', 'b2'), undefined);
});

test('a failing view records its error and retries; the others go on', async () => {
  await q.ok('CREATE STREAM small (v uint8)');
  await q.ok('CREATE MATERIALIZED VIEW too_big INTO small AS SELECT i AS v FROM events');
  await q.ok('CREATE MATERIALIZED VIEW healthy AS SELECT i FROM events WHERE i >= 9000');
  await eventually('both running', async () =>
    ['too_big', 'healthy'].every(
      (n) =>
        h.trb.services.mvs.state(h.trb.services.mvs.require('default', n)).status === 'ExecutingPipeline',
    ),
  );
  await q.ingest('events', ['i', 's'], [[9000, 'x']]);
  await eventually('too_big failed', async () => {
    const m = (await json('GET', '/v1beta2/materialized_views/too_big')).body;
    return /9000|range|uint8/i.test(String(m.last_error_message));
  });
  const state = h.trb.services.mvs.state(h.trb.services.mvs.require('default', 'too_big'));
  assert.ok(['Error', 'AutoRecovering', 'ExecutingPipeline', 'BuildingPipeline'].includes(state.status));
  await eventually(
    'it retried',
    async () => h.trb.services.mvs.state(h.trb.services.mvs.require('default', 'too_big')).retries > 0,
  );
  await eventually('healthy wrote', async () => (await count('SELECT count() FROM table(healthy)')) === 1);
  await q.ingest('events', ['i', 's'], [[9001, 'y']]);
  await eventually('healthy goes on', async () => (await count('SELECT count() FROM table(healthy)')) === 2);
});
