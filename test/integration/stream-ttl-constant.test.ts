/**
 * A TTL that reads no column (`now() - 1d`), which Proton accepts and the engine refuses unless
 * told otherwise: on CREATE STREAM, on ALTER STREAM ... MODIFY TTL, also of a materialized view's
 * implicit target (0023_mv id 3). Such a TTL expires every row once the engine applies it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { SqlCalls } from '../helpers/sql-calls.ts';

let h: Harness;
const q = new SqlCalls(() => h);
before(async () => {
  h = await startHarness();
});
after(() => h.close());

test('CREATE and ALTER STREAM take a TTL that reads no column; REMOVE TTL takes it away', async () => {
  await q.ok('CREATE STREAM ttl_c (i int) TTL now() - INTERVAL 1 DAY');
  assert.match(h.trb.services.streams.get('default', 'ttl_c')?.value.ttl?.engine ?? '', /now\(\)/);
  await q.ok('CREATE STREAM ttl_a (i int)');
  await q.ok('ALTER STREAM ttl_a MODIFY TTL now() - 1d');
  assert.match(h.trb.services.streams.get('default', 'ttl_a')?.value.ttl?.engine ?? '', /now\(\)/);
  await q.ok('ALTER STREAM ttl_a REMOVE TTL');
  assert.equal(h.trb.services.streams.get('default', 'ttl_a')?.value.ttl, undefined);
  // A column TTL that reads no column is taken too.
  await q.ok('CREATE STREAM ttl_col (i int, s string TTL now() - INTERVAL 1 DAY)');
});

test('a materialized view with an implicit target takes MODIFY TTL now() - 1d; one with INTO refuses (48)', async () => {
  await q.ok('CREATE STREAM ttl_src (i int)');
  await q.ok('CREATE STREAM ttl_into (ii int)');
  await q.ok('CREATE MATERIALIZED VIEW ttl_mv AS SELECT _tp_time, i + 1 AS ii FROM ttl_src');
  await q.ok(
    'CREATE MATERIALIZED VIEW ttl_mv_into INTO ttl_into AS SELECT _tp_time, i + 1 AS ii FROM ttl_src',
  );
  await q.ok('ALTER STREAM ttl_mv MODIFY TTL now() - 1d');
  await q.fails('ALTER STREAM ttl_mv_into MODIFY TTL now() - 1d', 400, 48);
  await q.ok('ALTER STREAM ttl_mv REMOVE TTL');
  await q.ok('DROP VIEW ttl_mv');
  await q.ok('DROP VIEW ttl_mv_into');
});
