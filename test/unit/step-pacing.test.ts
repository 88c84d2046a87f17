import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TailPacer } from '../../src/streaming/step-pacing.ts';

const options = { maxGapMs: 20, costRatio: 10, maxPendingRows: 100 };

test('a tail that has not stepped yet steps at once', () => {
  const p = new TailPacer(options);
  assert.ok(p.dueAt(10, 1) <= 0);
});

test('the next step waits costRatio times the mean step time after the last start', () => {
  const p = new TailPacer(options);
  p.stepped(1000, 1.5);
  assert.equal(p.dueAt(10, 1), 1015);
  // The mean moves a fifth of the way towards a slower step.
  p.stepped(2000, 0.5);
  assert.equal(p.dueAt(10, 1), 2013);
});

test('the gap is at most maxGapMs, however slow the steps are', () => {
  const p = new TailPacer(options);
  p.stepped(1000, 50);
  assert.equal(p.dueAt(10, 1), 1020);
});

test('with maxPendingRows rows waiting, or a gap of 0, a tail steps at once', () => {
  const p = new TailPacer(options);
  p.stepped(1000, 1.5);
  assert.equal(p.dueAt(100, 1), 0);
  const off = new TailPacer({ ...options, maxGapMs: 0 });
  off.stepped(1000, 1.5);
  assert.equal(off.dueAt(10, 1), 0);
});

test('a tail steps as soon as the commits that arrive within a gap are pending', () => {
  const p = new TailPacer(options);
  // Commits every 10 ms; a 20 ms gap holds two of them.
  for (let at = 0; at <= 100; at += 10) p.committed(at);
  p.stepped(100, 5);
  assert.equal(p.dueAt(10, 1), 120);
  assert.equal(p.dueAt(20, 2), 0);
  // Commits a little faster than every 10 ms still make two per step (not three, which would
  // make the first rows wait the whole gap).
  for (let at = 100; at <= 200; at += 9.5) p.committed(at);
  assert.equal(p.dueAt(20, 2), 0);
  // A pause longer than a second is a quiet stream, not its rate.
  p.committed(5000);
  p.stepped(5000, 5);
  assert.equal(p.dueAt(20, 2), 0);
  assert.equal(p.dueAt(10, 1), 5020);
});
