import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CommittedRangeNotifier } from '../../src/stream/committed-range-notifier.ts';
import { type CommittedRanges, SourceCursor } from '../../src/streaming/source-cursor.ts';
import type { BoundSource } from '../../src/streaming/stream-bindings.ts';

/** The notifier as the executor sees it, with the committed position of one stream. */
function ranges(n: CommittedRangeNotifier, committed: () => number): CommittedRanges {
  return {
    committedSn: () => committed(),
    subscribe: (key, listener) => n.subscribe(key, (r) => listener(r.toSn)),
    read: (_keys, work) => work(),
    resolveReads: (sql) => sql,
    recentCommitEnds: (key, after) => n.recentCommitEnds(key, after),
  };
}

const source = { key: 'default.s' } as BoundSource;

test('the notifier remembers where commits ended; rename moves and clear forgets them', () => {
  const n = new CommittedRangeNotifier();
  n.publish('default.s', { fromSn: 0, toSn: 2 });
  n.publish('default.s', { fromSn: 3, toSn: 3 });
  n.publish('default.s', { fromSn: 4, toSn: 9 });
  assert.deepEqual(n.recentCommitEnds('default.s', -1), [2, 3, 9]);
  assert.deepEqual(n.recentCommitEnds('default.s', 2), [3, 9]);
  n.rename('default.s', 'default.t');
  assert.deepEqual(n.recentCommitEnds('default.s', -1), []);
  assert.deepEqual(n.recentCommitEnds('default.t', -1), [2, 3, 9]);
  n.clear('default.t');
  assert.deepEqual(n.recentCommitEnds('default.t', -1), []);
});

test('a cursor takes one commit at a time when asked, also commits made before it opened', () => {
  const n = new CommittedRangeNotifier();
  let committed = -1;
  const commit = (from: number, to: number) => {
    committed = to;
    n.publish('default.s', { fromSn: from, toSn: to });
  };
  commit(0, 2);
  commit(3, 5);
  // Opened behind the committed position (a RECOVER restoring `after`).
  const c = new SourceCursor(
    source,
    5,
    ranges(n, () => committed),
    () => undefined,
  );
  c.after = 2;
  commit(6, 6);
  commit(7, 9);
  assert.deepEqual(c.nextRange(1000), { lo: 2, hi: 9 }, 'coalesced without oneCommit');
  assert.deepEqual(c.nextRange(1000, true), { lo: 2, hi: 5 });
  c.after = 5;
  assert.deepEqual(c.nextRange(1000, true), { lo: 5, hi: 6 });
  c.after = 6;
  assert.deepEqual(c.nextRange(2, true), { lo: 6, hi: 8 }, 'the row limit still applies');
  c.after = 8;
  assert.deepEqual(c.nextRange(1000, true), { lo: 8, hi: 9 });
  c.close();
});

test('a cursor that coalesces does not keep the commit ends it passed', () => {
  const n = new CommittedRangeNotifier();
  let committed = -1;
  const c = new SourceCursor(
    source,
    -1,
    ranges(n, () => committed),
    () => undefined,
  );
  for (let i = 0; i < 1000; i++) {
    committed = i;
    n.publish('default.s', { fromSn: i, toSn: i });
    const r = c.nextRange(1_000_000);
    c.after = r.hi;
  }
  assert.ok((c as unknown as { commitEnds: number[] }).commitEnds.length <= 1);
  c.close();
});
