import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ResultSink } from '../../src/streaming/result-sink.ts';
import { SharedRuns } from '../../src/streaming/shared-runs.ts';

/** A run standing at `at`, joinable there; `execute` hands rows on `push` until stopped. */
class FakeRun {
  at = [5];
  executions = 0;
  stopped = false;
  sink: ResultSink | undefined;
  joinableAt(startAfter: readonly number[]): boolean {
    return startAfter[0] === this.at[0];
  }
  execute = async (sink: ResultSink, signal: AbortSignal): Promise<void> => {
    this.executions++;
    this.sink = sink;
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    // Cleanup takes a while: the last member must not end before it.
    await new Promise((r) => setTimeout(r, 10));
    this.stopped = true;
  };
  push(rows: string[]) {
    return this.sink?.rows(rows);
  }
}

function client() {
  const rows: string[] = [];
  const stop = new AbortController();
  const sink: ResultSink = { rows: (r) => void rows.push(...r) };
  return { rows, stop, sink };
}

test('members at the run position join one execution; each gets every row; the last member ends it', async () => {
  const runs = new SharedRuns();
  const leader = new FakeRun();
  const a = client();
  const b = client();
  const served: FakeRun[] = [];
  const pa = runs.run('k', [5], leader, a.sink, a.stop.signal, leader.execute, (r) => served.push(r));
  const pb = runs.run(
    'k',
    [5],
    new FakeRun(),
    b.sink,
    b.stop.signal,
    () => assert.fail('runs once'),
    (r) => served.push(r),
  );
  assert.deepEqual(served, [leader, leader]);
  assert.equal(runs.joined, 1);
  assert.equal(runs.running, 1);
  await leader.push(['[1]', '[2]']);
  a.stop.abort();
  await pa; // a leaves; the run goes on for b
  assert.equal(leader.stopped, false);
  await leader.push(['[3]']);
  assert.deepEqual(a.rows, ['[1]', '[2]']);
  assert.deepEqual(b.rows, ['[1]', '[2]', '[3]']);
  b.stop.abort();
  await pb;
  assert.equal(leader.stopped, true, 'the last member ends once the run has cleaned up');
  assert.equal(runs.running, 0);
  assert.equal(leader.executions, 1);
});

test('another key or another position runs alone', async () => {
  const runs = new SharedRuns();
  const first = new FakeRun();
  const c1 = client();
  const p1 = runs.run('k', [5], first, c1.sink, c1.stop.signal, first.execute, () => undefined);
  const other = new FakeRun();
  const c2 = client();
  const p2 = runs.run('k', [6], other, c2.sink, c2.stop.signal, other.execute, () => undefined);
  const third = new FakeRun();
  const c3 = client();
  const p3 = runs.run('k2', [5], third, c3.sink, c3.stop.signal, third.execute, () => undefined);
  assert.equal(runs.joined, 0);
  assert.equal(runs.running, 3);
  for (const c of [c1, c2, c3]) c.stop.abort();
  await Promise.all([p1, p2, p3]);
  assert.equal(runs.running, 0);
});

test('a member whose sink fails fails alone; a failing run fails every member', async () => {
  const runs = new SharedRuns();
  const leader = new FakeRun();
  const good = client();
  const bad = client();
  bad.sink = {
    rows: () => {
      throw new Error('gone');
    },
  };
  const pg = runs.run('k', [5], leader, good.sink, good.stop.signal, leader.execute, () => undefined);
  const pb = runs.run('k', [5], new FakeRun(), bad.sink, bad.stop.signal, leader.execute, () => undefined);
  await leader.push(['[1]']);
  await assert.rejects(pb, /gone/);
  assert.deepEqual(good.rows, ['[1]']);
  good.stop.abort();
  await pg;

  const failing = new FakeRun();
  const m1 = client();
  const m2 = client();
  let fail: (e: Error) => void = () => undefined;
  const execute = () =>
    new Promise<void>((_, reject) => {
      fail = reject;
    });
  const f1 = runs.run('f', [5], failing, m1.sink, m1.stop.signal, execute, () => undefined);
  const f2 = runs.run('f', [5], new FakeRun(), m2.sink, m2.stop.signal, execute, () => undefined);
  fail(new Error('engine down'));
  await assert.rejects(f1, /engine down/);
  await assert.rejects(f2, /engine down/);
  assert.equal(runs.running, 0);
});
