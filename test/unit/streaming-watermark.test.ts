import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lastFinalizedWindowEnd, WatermarkTracker } from '../../src/streaming/watermark.ts';
import { addInterval, windowStartOf } from '../../src/streaming/window-interval.ts';

const t = (hms: string) => Date.parse(`2024-01-01T${hms}Z`);
const s = (n: number) => ({ value: n, unit: 'SECOND' as const });

test('tumble watermark: the window start of the delayed max event time (notes §1.7 worked example)', () => {
  const w = new WatermarkTracker({ kind: 'tumble', size: s(5) }, s(2));
  assert.equal(w.observe(Math.max(t('20:01:00'), t('20:01:01'), t('20:01:05'))), true);
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
  assert.equal(lastFinalizedWindowEnd(6000, hop), 5000);
  assert.equal(lastFinalizedWindowEnd(5000, hop), 5000);
  assert.equal(lastFinalizedWindowEnd(4999, hop), 3000);
});

test('timeout closes everything seen so far', () => {
  const w = new WatermarkTracker({ kind: 'tumble', size: s(10) }, undefined);
  assert.equal(w.timeout(), false, 'nothing seen, nothing to close');
  w.observe(t('10:00:05'));
  assert.equal(w.watermark, t('10:00:00'));
  assert.equal(w.timeout(), true);
  assert.equal(w.watermark, t('10:00:05') + 1);
});

test('calendar windows align to months; weeks to Mondays', () => {
  const m = { value: 1, unit: 'MONTH' as const };
  assert.equal(windowStartOf(Date.parse('2024-03-17T10:00:00Z'), m), Date.parse('2024-03-01T00:00:00Z'));
  assert.equal(
    windowStartOf(Date.parse('2024-05-17T10:00:00Z'), { value: 1, unit: 'QUARTER' }),
    Date.parse('2024-04-01T00:00:00Z'),
  );
  assert.equal(
    addInterval(Date.parse('2024-01-31T08:00:00Z'), m),
    Date.parse('2024-02-29T08:00:00Z'),
    'clamped like addMonths',
  );
  assert.equal(addInterval(Date.parse('2024-03-31T00:00:00Z'), m, -1), Date.parse('2024-02-29T00:00:00Z'));
  assert.equal(
    windowStartOf(Date.parse('2024-01-03T10:00:00Z'), { value: 1, unit: 'WEEK' }),
    Date.parse('2024-01-01T00:00:00Z'),
  );
});
