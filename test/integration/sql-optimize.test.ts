/**
 * OPTIMIZE [STREAM|TABLE] name [PARTITION p] [FINAL]: the stream's front moves into its MergeTree
 * and the MergeTree's parts are merged; the rows stay as they were. DEDUPLICATE is refused.
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

async function engineText(sql: string): Promise<string> {
  return (await h.trb.services.engine.query(sql, { format: 'TSVRaw' })).text().trim();
}

const activeParts = (stream: string) =>
  engineText(
    `SELECT count() FROM system.parts WHERE database = 'default' AND table = '.tp_history.${stream}' AND active`,
  );

test('OPTIMIZE FINAL moves the front and merges the parts; the rows stay as they were', async () => {
  await q.ok('CREATE STREAM opt_a (i int64, s string) PARTITION BY i % 2 ORDER BY i');
  for (let b = 0; b < 3; b++) {
    await q.ingest(
      'opt_a',
      ['i', 's'],
      [
        [b * 2, `e${b}`],
        [b * 2 + 1, `o${b}`],
      ],
    );
    await h.trb.services.streams.flush('default', 'opt_a');
  }
  await q.ingest('opt_a', ['i', 's'], [[6, 'front']]);
  assert.equal(await activeParts('opt_a'), '6');
  assert.equal(await engineText('SELECT count() FROM default.`.tp_front.opt_a`'), '1');
  await q.ok('OPTIMIZE STREAM opt_a FINAL');
  // The front's row moved, and each of the two partitions is one part.
  assert.equal(await engineText('SELECT count() FROM default.`.tp_front.opt_a`'), '0');
  assert.equal(await activeParts('opt_a'), '2');
  assert.deepEqual(await q.rows('SELECT i, s FROM table(opt_a) ORDER BY i'), [
    [0, 'e0'],
    [1, 'o0'],
    [2, 'e1'],
    [3, 'o1'],
    [4, 'e2'],
    [5, 'o2'],
    [6, 'front'],
  ]);
  // New rows after it go on with the next sequence numbers.
  await q.ingest('opt_a', ['i', 's'], [[7, 'after']]);
  assert.deepEqual(await q.rows('SELECT max(_tp_sn), count() FROM table(opt_a)'), [[7, 8]]);
});

test('OPTIMIZE TABLE of one partition merges that partition only', async () => {
  await q.ok('CREATE STREAM opt_p (i int64) PARTITION BY i % 2 ORDER BY i');
  for (let b = 0; b < 2; b++) {
    await q.ingest('opt_p', ['i'], [[b * 2], [b * 2 + 1]]);
    await h.trb.services.streams.flush('default', 'opt_p');
  }
  assert.equal(await activeParts('opt_p'), '4');
  await q.ok('OPTIMIZE TABLE opt_p PARTITION 1 FINAL');
  assert.equal(await activeParts('opt_p'), '3');
  assert.deepEqual(await q.rows('SELECT count() FROM table(opt_p)'), [[4]]);
});

test('OPTIMIZE of a memory stream and of a plain table is accepted; DEDUPLICATE and unknown streams are refused', async () => {
  await q.ok("CREATE STREAM opt_m (i int64) SETTINGS storage_type = 'memory'");
  await q.ingest('opt_m', ['i'], [[1]]);
  await q.ok('OPTIMIZE STREAM opt_m FINAL');
  assert.deepEqual(await q.rows('SELECT i FROM table(opt_m)'), [[1]]);
  await q.ok('CREATE STREAM opt_t (i int64) ENGINE = MergeTree ORDER BY i');
  await q.ok('INSERT INTO opt_t (i) VALUES (1), (2)');
  await q.ok('OPTIMIZE TABLE opt_t FINAL');
  assert.deepEqual(await q.rows('SELECT * FROM opt_t ORDER BY i'), [[1], [2]]);
  await q.fails('OPTIMIZE TABLE opt_t FINAL DEDUPLICATE', 400, 48, /DEDUPLICATE is not supported/);
  await q.fails('OPTIMIZE TABLE opt_missing', 404, 60);
});
