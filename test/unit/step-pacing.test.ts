import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TailPacer } from '../../src/streaming/step-pacing.ts';

const options = { maxGapMs: 20, costRatio: 10, maxPendingRows: 100, lateShare: 0, maxHoldMs: 15 };

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

const lateOptions = { ...options, maxGapMs: 0, lateShare: 0.3 };

/** Commits every `everyMs` from `from`; answers the hold decision of each (its due time, 0: at once). */
function commitsEvery(p: TailPacer, from: number, everyMs: number, n: number): number[] {
  const due: number[] = [];
  let held = false;
  for (let i = 0; i < n; i++) {
    const at = from + i * everyMs;
    p.committed(at);
    // After a held commit two are pending: they step at once, together.
    const d: number = held ? p.dueAt(20, 2) : p.dueAt(10, 1);
    due.push(d);
    // Held until after the next commit arrives: the two step together then. Held less long: the
    // commit steps alone when its hold ends.
    held = d >= at + everyMs;
    if (!held) p.stepped(Math.max(at, d), 2);
  }
  return due;
}

test('late share: a quiet stream is never held', () => {
  const p = new TailPacer(lateOptions);
  // Commits 2 s apart: no rate, nothing held.
  assert.deepEqual(commitsEvery(p, 0, 2000, 5), [0, 0, 0, 0, 0]);
  // Commits 50 ms apart: the next is not due within maxHoldMs.
  assert.deepEqual(commitsEvery(p, 20_000, 50, 10), Array(10).fill(0));
});

test('late share: on a busy stream about lateShare of the commits are held, at most maxHoldMs', () => {
  const p = new TailPacer(lateOptions);
  const due = commitsEvery(p, 0, 10, 200).slice(50);
  const held = due.filter((d) => d > 0).length;
  assert.ok(held >= 0.2 * due.length && held <= 0.35 * due.length, `held ${held} of ${due.length}`);
  // A held commit waits for the next (10 ms) and at most 2 commit intervals or maxHoldMs.
  for (const [i, d] of due.entries()) if (d > 0) assert.ok(d - (500 + i * 10) <= 15, `held until ${d}`);
});

test('late share: two pending commits step at once, and a decision holds for its commit', () => {
  const p = new TailPacer(lateOptions);
  for (let at = 0; at < 100; at += 10) p.committed(at);
  p.committed(100);
  const first = p.dueAt(10, 1);
  assert.ok(first > 100);
  // Asked again (another wake-up) about the same commit: the same answer.
  assert.equal(p.dueAt(10, 1), first);
  p.committed(110);
  assert.equal(p.dueAt(20, 2), 0);
  // Enough rows pending: at once.
  assert.equal(p.dueAt(100, 1), 0);
});

test('late share 0 (the default) steps once per commit', () => {
  const p = new TailPacer({ ...lateOptions, lateShare: 0 });
  assert.deepEqual(commitsEvery(p, 0, 10, 50), Array(50).fill(0));
});
