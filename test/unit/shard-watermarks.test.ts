import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ShardWatermarks } from '../../src/streaming/shard-watermarks.ts';
import { nanosFromMillis } from '../../src/streaming/window-time.ts';

const t = (hms: string) => nanosFromMillis(Date.parse(`2020-02-02T${hms}Z`));
const s = (n: number) => ({ value: n, unit: 'SECOND' as const });
const MIN = 'toInt64(-9223372036854775807)';

test('windows close at the smallest shard watermark, and only once every shard has one', () => {
  const w = new ShardWatermarks({ kind: 'tumble', size: s(5) }, undefined, 3);
  assert.equal(w.any, false);
  assert.equal(w.closingSql(''), MIN);
  assert.equal(w.observe(new Map([['0', t('20:00:12')]])), false, 'shards 1 and 2 have no watermark');
  assert.equal(w.observe(new Map([['1', t('20:00:21')]])), false);
  assert.equal(w.aligned, undefined);
  assert.equal(w.observe(new Map([['2', t('20:00:07')]])), true, 'every shard has one now');
  assert.equal(w.aligned, t('20:00:05'), 'shard 2 is the slowest');
  assert.equal(w.closingSql(''), `toInt64(${t('20:00:05')})`);
  assert.equal(w.observe(new Map([['1', t('20:00:40')]])), false, 'a fast shard moves nothing');
  assert.equal(
    w.observe(
      new Map([
        ['0', t('20:00:31')],
        ['2', t('20:00:36')],
      ]),
    ),
    true,
  );
  assert.equal(w.aligned, t('20:00:30'));
  assert.equal(w.maxEventTime(), t('20:00:40'));
});

test('a row is late against its own shard only; the lookup SQL keys by shard', () => {
  const w = new ShardWatermarks({ kind: 'tumble', size: s(5) }, undefined, 2);
  w.observe(
    new Map([
      ['0', t('20:00:21')],
      ['1', t('20:00:03')],
    ]),
  );
  const sql = w.lookupSql('toString(_tp_shard)');
  assert.ok(sql.startsWith('transform(toString(_tp_shard), '), sql);
  assert.ok(
    sql.includes(`'0', '1'`) && sql.includes(String(t('20:00:20'))) && sql.includes(String(t('20:00:00'))),
    sql,
  );
});

test('hop: per-shard window-end watermarks, aligned at the minimum (0018 state11 307 by hand)', () => {
  const hop = { kind: 'hop' as const, slide: s(3), size: s(5) };
  const w = new ShardWatermarks(hop, undefined, 3);
  // Inserts 01-02 / 03-04 / 05-06 / 07 / 08 / 09 went to shards 0, 1, 2, 0, 1, 2.
  w.observe(new Map([['0', t('20:00:07')]]));
  w.observe(new Map([['1', t('20:00:08')]]));
  w.observe(new Map([['2', t('20:00:09')]]));
  assert.equal(w.aligned, t('20:00:05'), 'shard 0 at 07 has passed only the windows ending by 20:00:05');
  const saved = w.save();
  const recovered = new ShardWatermarks(hop, undefined, 3);
  recovered.restore(saved);
  assert.equal(recovered.aligned, t('20:00:05'), 'a checkpoint keeps every shard');
  recovered.observe(new Map([['0', t('20:00:10')]]));
  recovered.observe(new Map([['1', t('20:00:11')]]));
  assert.equal(recovered.observe(new Map([['2', t('20:00:12')]])), false, 'shard 0 (10 -> 08) leads the min');
  assert.equal(recovered.aligned, t('20:00:08'));
  assert.equal(w.aligned, t('20:00:05'), 'restore copies: the original is unchanged');
});

test('copy is independent; timeout closes what every shard has seen, an empty shard still holds', () => {
  const w = new ShardWatermarks({ kind: 'tumble', size: s(10) }, undefined, 2);
  w.observe(new Map([['0', t('20:00:05')]]));
  assert.equal(w.copy().timeout(), false, 'shard 1 never got a row');
  w.observe(new Map([['1', t('20:00:15')]]));
  assert.equal(w.aligned, t('20:00:00'));
  const c = w.copy();
  assert.equal(c.timeout(), true);
  assert.equal(c.aligned, t('20:00:05') + 1n);
  assert.equal(w.aligned, t('20:00:00'), 'the copy moved alone');
});
