/**
 * MergeTree storage settings in CREATE STREAM ... SETTINGS (src/stream/merge-tree-settings.ts):
 * accepted, kept and printed by SHOW CREATE, given to the hybrid stream's MergeTree (obsolete ones
 * kept only), without changing what a query answers; settings that limit inserts or drop rows stay
 * unknown (115), and a value that is not a number is refused.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Engine } from '../../src/engine/engine.ts';
import { ERRORS } from '../../src/errors/catalogue.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { assertError, ingestCompact, ingestRaw } from '../helpers/streams.ts';

let h: Harness;
let engine: Engine;
before(async () => {
  h = await startHarness();
  engine = (h.trb as unknown as { services: { engine: Engine } }).services.engine;
});
after(() => h.close());

async function query(sql: string) {
  return h.call('POST', '/v1beta2/queries', { body: { sql } });
}

function dataRows(body: string): unknown[][] {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data: ['))
    .flatMap((l) => JSON.parse(l.slice('data: '.length)) as unknown[][]);
}

test('storage settings reach the MergeTree, are printed, and leave results alone', async () => {
  const created = await query(
    'CREATE STREAM st_tuned (k nullable(int), v string) ORDER BY k SETTINGS index_granularity = 2, ' +
      'index_granularity_bytes = 0, min_bytes_for_wide_part = 0, vertical_merge_algorithm_min_rows_to_activate = 1, ' +
      'allow_nullable_key = 1, write_final_mark = 1',
  );
  assert.equal(created.statusCode, 204, created.body);
  const ddl = (
    await engine.query('SHOW CREATE TABLE `default`.`.tp_history.st_tuned`', { format: 'TSVRaw' })
  ).text();
  for (const s of [
    'index_granularity = 2',
    'index_granularity_bytes = 0',
    'min_bytes_for_wide_part = 0',
    'vertical_merge_algorithm_min_rows_to_activate = 1',
    'allow_nullable_key = 1',
  ]) {
    assert.ok(ddl.includes(s), `${s} in ${ddl}`);
  }
  assert.ok(!ddl.includes('write_final_mark'), 'an obsolete setting is kept, not passed');

  const shown = await h.call('POST', '/v1beta2/exec', {
    body: { sql: 'SHOW CREATE STREAM st_tuned', type: 'historical' },
  });
  assert.match(shown.body, /index_granularity_bytes = 0/);
  assert.match(shown.body, /write_final_mark = 1/);

  await ingestCompact(
    h,
    'st_tuned',
    ['k', 'v'],
    [
      [3, 'c'],
      [null, 'n'],
      [1, 'a'],
      [2, 'b'],
    ],
  );
  await h.trb.services.streams.flush('default', 'st_tuned');
  const moved = await engine.query('SELECT count() FROM `default`.`.tp_history.st_tuned`', { format: 'TSV' });
  assert.equal(moved.text().trim(), '4', 'the rows are in the tuned MergeTree');
  const r = await query("SELECT k, v FROM table(st_tuned) ORDER BY k SETTINGS query_mode = 'table'");
  assert.equal(r.statusCode, 200, r.body);
  assert.deepEqual(dataRows(r.body), [
    [1, 'a'],
    [2, 'b'],
    [3, 'c'],
    [null, 'n'],
  ]);
});

test('a memory stream accepts them (it has no MergeTree)', async () => {
  const created = await query(
    "CREATE STREAM st_mem (a int) SETTINGS storage_type = 'memory', index_granularity_bytes = 0",
  );
  assert.equal(created.statusCode, 204, created.body);
});

test('insert limits and deduplication stay unknown; a value must be a number', async () => {
  for (const setting of [
    'parts_to_throw_insert = 1',
    'non_replicated_deduplication_window = 10',
    "storage_policy = 'x'",
  ]) {
    assertError(
      await query(`CREATE STREAM st_bad (a int) SETTINGS ${setting}`),
      400,
      ERRORS.UNKNOWN_SETTING.code,
    );
  }
  assertError(
    await query("CREATE STREAM st_bad (a int) SETTINGS index_granularity_bytes = 'lots'"),
    400,
    ERRORS.BAD_ARGUMENTS.code,
    /index_granularity_bytes must be a non-negative number/,
  );
});

test('type checks a stream switches off (SETTINGS or a SET before it) hold for all its tables, after a restart too', async () => {
  const refused = await query('CREATE STREAM st_lc0 (x low_cardinality(uint64))');
  assert.equal(refused.json().code, 455, refused.body);

  const viaSet = await query(
    'SET allow_suspicious_low_cardinality_types = 1; CREATE STREAM st_lc (x low_cardinality(uint64))',
  );
  assert.equal(viaSet.statusCode, 204, viaSet.body);
  const viaSettings = await query(
    "CREATE STREAM st_lc_mem (x low_cardinality(uint64)) SETTINGS storage_type = 'memory', allow_suspicious_low_cardinality_types = true",
  );
  assert.equal(viaSettings.statusCode, 204, viaSettings.body);
  const shown = await h.call('POST', '/v1beta2/exec', {
    body: { sql: 'SHOW CREATE STREAM st_lc', type: 'historical' },
  });
  assert.match(shown.body, /allow_suspicious_low_cardinality_types = 1/);

  await ingestCompact(h, 'st_lc', ['x'], [[1], [2]]);
  const inserted = await query('INSERT INTO st_lc (x) VALUES (4)');
  assert.ok(inserted.statusCode < 300, inserted.body);
  await ingestCompact(h, 'st_lc_mem', ['x'], [[5]]);
  h = await h.restart();
  engine = (h.trb as unknown as { services: { engine: Engine } }).services.engine;
  await ingestCompact(h, 'st_lc', ['x'], [[3]]);
  const r = await query("SELECT sum(x) FROM st_lc SETTINGS query_mode = 'table'");
  assert.equal(r.statusCode, 200, r.body);
  assert.deepEqual(dataRows(r.body), [[10]]);

  const added = await query('ALTER STREAM st_lc ADD COLUMN y low_cardinality(uint32) DEFAULT 7');
  assert.equal(added.statusCode, 204, added.body);
  const modified = await query('ALTER STREAM st_lc_mem ADD COLUMN y low_cardinality(int16) DEFAULT 8');
  assert.equal(modified.statusCode, 204, modified.body);
  const later = await query("SELECT sum(y) FROM st_lc SETTINGS query_mode = 'table'");
  assert.deepEqual(dataRows(later.body), [[28]]);
  const stillChecked = await query('ALTER STREAM st_tuned ADD COLUMN z low_cardinality(uint32)');
  assert.equal(stillChecked.json().code, 455, stillChecked.body);
});

test('a large request staged for a stream with a switched-off type check is staged and moved', async () => {
  const created = await query(
    'CREATE STREAM st_lc_big (x low_cardinality(uint64)) SETTINGS allow_suspicious_low_cardinality_types = 1',
  );
  assert.equal(created.statusCode, 204, created.body);
  const n = 30000;
  const body = JSON.stringify({ columns: ['x'], data: Array.from({ length: n }, (_, i) => [i]) });
  assert.ok(Buffer.byteLength(body) >= 128 * 1024);
  const before = h.trb.services.streams.stageCounters();
  const r = await ingestRaw(h, 'st_lc_big', body, 'application/json');
  assert.equal(r.statusCode, 200, r.body);
  const after = h.trb.services.streams.stageCounters();
  assert.equal(after.started, before.started + 1);
  assert.equal(after.moved, before.moved + 1, 'the staged rows were used');
  const sum = await query("SELECT count(), sum(x) FROM st_lc_big SETTINGS query_mode = 'table'");
  assert.deepEqual(dataRows(sum.body), [[n, (n * (n - 1)) / 2]]);
});
