import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BATCH_FLUSH_ROWS, RowBatcher } from '../../src/connectors/sources/row-batcher.ts';
import type { SourceWriter } from '../../src/connectors/sources/source-runtime.ts';

function recordingWriter(failFirst = false): SourceWriter & { commits: number[][] } {
  const commits: number[][] = [];
  let calls = 0;
  return {
    commits,
    async write(events) {
      calls++;
      if (failFirst && calls === 1) throw new Error('stream refused');
      commits.push(events.map((e) => e.n as number));
    },
    reject: () => undefined,
    report: () => undefined,
  };
}

test('a flush commits what waits when its turn comes: every row once, in order', async () => {
  const w = recordingWriter();
  const b = new RowBatcher(w);
  b.add({ n: 1 });
  b.add({ n: 2 });
  const first = b.flush();
  b.add({ n: 3 }); // before the first flush ran: it goes with it
  await Promise.all([first, b.flush(), b.flush()]);
  b.add({ n: 4 });
  await b.flush();
  assert.deepEqual(w.commits, [[1, 2, 3], [4]]);
});

test('add says when enough rows wait; a failed commit is dropped (at most once) and the next goes on', async () => {
  const w = recordingWriter(true);
  const b = new RowBatcher(w);
  let full = false;
  for (let i = 0; i < BATCH_FLUSH_ROWS && !full; i++) full = b.add({ n: i });
  assert.equal(full, true);
  await b.flush(); // refused: no throw
  b.add({ n: -1 });
  await b.flush();
  assert.deepEqual(w.commits, [[-1]]);
});
