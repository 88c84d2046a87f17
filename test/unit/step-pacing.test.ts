import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TailPacer } from '../../src/streaming/step-pacing.ts';

const options = { maxGapMs: 20, costRatio: 10, maxPendingRows: 100 };

test('a tail that has not stepped yet steps at once', () => {
  const p = new TailPacer(options);
  assert.ok(p.dueAt(10) <= 0);
});

test('the next step waits costRatio times the mean step time after the last start', () => {
  const p = new TailPacer(options);
  p.stepped(1000, 1.5);
  assert.equal(p.dueAt(10), 1015);
  // The mean moves a fifth of the way towards a slower step.
  p.stepped(2000, 0.5);
  assert.equal(p.dueAt(10), 2013);
});

test('the gap is at most maxGapMs, however slow the steps are', () => {
  const p = new TailPacer(options);
  p.stepped(1000, 50);
  assert.equal(p.dueAt(10), 1020);
});

test('with maxPendingRows rows waiting, or a gap of 0, a tail steps at once', () => {
  const p = new TailPacer(options);
  p.stepped(1000, 1.5);
  assert.equal(p.dueAt(100), 0);
  const off = new TailPacer({ ...options, maxGapMs: 0 });
  off.stepped(1000, 1.5);
  assert.equal(off.dueAt(10), 0);
});
