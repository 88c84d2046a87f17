import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SubstreamWatermarks } from '../../src/streaming/substream-watermarks.ts';
import { lastFinalizedWindowEnd, WatermarkTracker } from '../../src/streaming/watermark.ts';
import { addNanos, nanosFromMillis, windowStartNanos } from '../../src/streaming/window-time.ts';
import { validateWindowTimeType } from '../../src/streaming/window-time-check.ts';

const t = (hms: string) => nanosFromMillis(Date.parse(`2024-01-01T${hms}Z`));
const s = (n: number) => ({ value: n, unit: 'SECOND' as const });

test('tumble watermark: the window start of the delayed max event time (notes §1.7 worked example)', () => {
  const w = new WatermarkTracker({ kind: 'tumble', size: s(5) }, s(2));
  assert.equal(w.watermark, undefined);
  assert.equal(w.observe(t('20:01:05')), true);
  assert.equal(w.watermark, t('20:01:00'));
  assert.equal(w.observe(t('20:01:08')), true);
  assert.equal(w.watermark, t('20:01:05'));
  assert.equal(w.observe(t('20:01:10')), false, 'floor(20:01:08) stays 20:01:05');
  assert.equal(w.watermark, t('20:01:05'));
  assert.equal(w.observe(t('20:01:12')), true);
  assert.equal(w.watermark, t('20:01:10'));
  assert.equal(w.observe(t('20:01:01')), false, 'an older max never moves it back');
});

test('hop watermark: the end of the last window wholly at or before the time', () => {
  const hop = { kind: 'hop' as const, slide: s(2), size: s(3) };
  assert.equal(lastFinalizedWindowEnd(6_000_000_000n, hop), 5_000_000_000n);
  assert.equal(lastFinalizedWindowEnd(5_000_000_000n, hop), 5_000_000_000n);
  assert.equal(lastFinalizedWindowEnd(4_999_999_999n, hop), 3_000_000_000n);
});

test('timeout closes everything seen so far', () => {
  const w = new WatermarkTracker({ kind: 'tumble', size: s(10) }, undefined);
  assert.equal(w.timeout(), false, 'nothing seen, nothing to close');
  w.observe(t('10:00:05'));
  assert.equal(w.watermark, t('10:00:00'));
  assert.equal(w.timeout(), true);
  assert.equal(w.watermark, t('10:00:05') + 1n);
});

test('nanosecond windows keep every digit; calendar windows align to months, weeks to Mondays', () => {
  const ns = { value: 1, unit: 'NANOSECOND' as const };
  const at = 1_356_998_400_000_000_001n; // 2013-01-01 00:00:00.000000001
  assert.equal(windowStartNanos(at, ns), at);
  assert.equal(addNanos(at, ns), at + 1n);
  const m = { value: 1, unit: 'MONTH' as const };
  const ms = (iso: string) => nanosFromMillis(Date.parse(iso));
  assert.equal(windowStartNanos(ms('2024-03-17T10:00:00Z'), m), ms('2024-03-01T00:00:00Z'));
  assert.equal(
    windowStartNanos(ms('2024-05-17T10:00:00Z'), { value: 1, unit: 'QUARTER' }),
    ms('2024-04-01T00:00:00Z'),
  );
  assert.equal(addNanos(ms('2024-01-31T08:00:00Z'), m), ms('2024-02-29T08:00:00Z'), 'clamped like addMonths');
  assert.equal(
    windowStartNanos(ms('2024-01-03T10:00:00Z'), { value: 1, unit: 'WEEK' }),
    ms('2024-01-01T00:00:00Z'),
  );
});

test('each substream has its own watermark; the lookup SQL carries only those that have one', () => {
  const w = new SubstreamWatermarks({ kind: 'tumble', size: s(1) }, undefined);
  assert.equal(w.any, false);
  assert.match(w.lookupSql('k'), /^toInt64\(-9223372036854775807\)$/);
  assert.equal(w.observe(new Map([['a', t('00:00:03')]])), true);
  assert.equal(w.observe(new Map([['b', t('10:00:00')]])), true);
  assert.equal(w.observe(new Map([['a', t('00:00:02')]])), false, 'b moving far ahead does not move a');
  const sql = w.lookupSql('k');
  assert.ok(
    sql.includes(`'a', 'b'`) && sql.includes(String(t('00:00:03'))) && sql.includes(String(t('10:00:00'))),
    sql,
  );
});

test('window time columns: datetime or datetime64 only, and no finer interval than their precision', () => {
  validateWindowTimeType('tumble', 'DateTime', [s(1)]);
  validateWindowTimeType('tumble', "Nullable(DateTime64(9, 'UTC'))", [{ value: 1, unit: 'NANOSECOND' }]);
  assert.throws(
    () => validateWindowTimeType('tumble', 'Date', [{ value: 1, unit: 'DAY' }]),
    (e: { code: number }) => e.code === 43,
  );
  assert.throws(
    () => validateWindowTimeType('tumble', 'DateTime64(3)', [{ value: 1, unit: 'MICROSECOND' }]),
    (e: { code: number }) => e.code === 36,
  );
  assert.throws(
    () => validateWindowTimeType('hop', 'DateTime', [{ value: 1, unit: 'MILLISECOND' }, s(1)]),
    (e: { code: number }) => e.code === 36,
  );
});
