/**
 * The watermark rule of an aligned join of two changelog inputs (join-changelog-alignment.ts),
 * on hand-computed sequences: side 0 is the left, side 1 the right, offset 1 ms.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChangelogAlignment, type TimedRow } from '../../src/streaming/join-changelog-alignment.ts';

const ms = (n: number): bigint => BigInt(n) * 1_000_000n;
const row = (sn: number, t: number): TimedRow => ({ sn, t: ms(t) });
const none: TimedRow[] = [];

test('a left row waits until the right side is past its time less the offset; a right row until the left is past its time plus it', () => {
  const a = new ChangelogAlignment(ms(1), [0, 0]);
  // Left t=4000: the right side has no time yet, it waits.
  assert.deepEqual(a.pull([[row(1, 4000)], none]), []);
  // Right t=6000: 3999 < 6000, the left row applies; the right one waits (6000 > 3999).
  assert.deepEqual(a.pull([none, [row(1, 6000)]]), [{ side: 0, from: 0, to: 1 }]);
  // Left t=6000: 5999 < 6000 applies at once; the right still waits (6000 > 5999).
  assert.deepEqual(a.pull([[row(2, 6000)], none]), [{ side: 0, from: 1, to: 2 }]);
  // Left t=7000: the right row applies (6000 <= 6999), the left one waits (6999 >= 6000).
  assert.deepEqual(a.pull([[row(3, 7000)], none]), [{ side: 1, from: 0, to: 1 }]);
  assert.deepEqual([...a.done], [2, 1]);
});

test('rows of one step are pulled in turn, right first, and apply as they are pulled', () => {
  const a = new ChangelogAlignment(ms(1), [0, 0]);
  // The four rows of the test above in one step: the same changes, in the same order.
  assert.deepEqual(a.pull([[row(1, 4000), row(2, 6000), row(3, 7000)], [row(1, 6000)]]), [
    { side: 0, from: 0, to: 1 },
    { side: 0, from: 1, to: 2 },
    { side: 1, from: 0, to: 1 },
  ]);
});

test('a checkpoint keeps what applied and the watermarks; the waiting rows are pulled again', () => {
  const a = new ChangelogAlignment(ms(1), [0, 0]);
  a.pull([[row(1, 4000), row(2, 6000), row(3, 7000)], [row(1, 6000)]]);
  const b = new ChangelogAlignment(ms(1), [0, 0]);
  b.restore(JSON.parse(JSON.stringify(a.save())));
  assert.deepEqual([...b.done], [2, 1]);
  assert.deepEqual([...b.seen], [2, 1]);
  // Left row 3 (t=7000) again, and a right row at 7000: left 6999 < 7000, it applies.
  assert.deepEqual(b.pull([[row(3, 7000)], [row(2, 7000)]]), [{ side: 0, from: 2, to: 3 }]);
});
