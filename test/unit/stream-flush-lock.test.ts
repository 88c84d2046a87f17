import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BufferFlusher } from '../../src/stream/buffer-flusher.ts';
import { FlushLock } from '../../src/stream/flush-lock.ts';
import type { BufferPolicy } from '../../src/stream/stream-tables.ts';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const tick = () => new Promise((r) => setImmediate(r));

test('reads share the lock; an exclusive section waits for the reads inside and holds new ones back', async () => {
  const lock = new FlushLock();
  const log: string[] = [];
  const r1 = deferred();
  const r2 = deferred();
  const a = lock.read(async () => {
    log.push('a in');
    await r1.promise;
    log.push('a out');
  });
  const b = lock.read(async () => {
    log.push('b in');
    await r2.promise;
    log.push('b out');
  });
  await tick();
  assert.equal(lock.activeReaders, 2, 'two reads at once');
  const x = lock.exclusive(async () => {
    log.push(`x with ${lock.activeReaders} readers`);
  });
  const c = lock.read(async () => {
    log.push('c in');
  });
  await tick();
  assert.ok(!log.includes('c in'), 'a read arriving after an impatient exclusive waits');
  r1.resolve();
  await tick();
  assert.ok(!log.some((l) => l.startsWith('x')), 'the exclusive section waits for every read inside');
  r2.resolve();
  await Promise.all([a, b, x, c]);
  assert.deepEqual(log, ['a in', 'b in', 'a out', 'b out', 'x with 0 readers', 'c in']);
});

test('a patient exclusive section lets new reads in until a moment with none inside', async () => {
  const lock = new FlushLock();
  const log: string[] = [];
  const r1 = deferred();
  const a = lock.read(async () => {
    await r1.promise;
    log.push('a out');
  });
  await tick();
  const x = lock.exclusive(async () => {
    log.push('x');
  }, 10_000);
  const b = lock.read(async () => {
    log.push('b in');
  });
  await b;
  assert.deepEqual(log, ['b in'], 'a read got in while the flush was being patient');
  r1.resolve();
  await Promise.all([a, x]);
  assert.deepEqual(log, ['b in', 'a out', 'x']);
});

test('a patient exclusive section stops letting reads in once its patience is out', async () => {
  const lock = new FlushLock();
  const r1 = deferred();
  const a = lock.read(() => r1.promise);
  const x = lock.exclusive(async () => 'done', 20);
  await new Promise((r) => setTimeout(r, 40));
  let late = false;
  const b = lock.read(async () => {
    late = true;
  });
  await tick();
  assert.equal(late, false);
  r1.resolve();
  assert.equal(await x, 'done');
  await Promise.all([a, b]);
  assert.equal(late, true);
});

test('exclusive sections run one at a time; a failing one releases the lock', async () => {
  const lock = new FlushLock();
  let inside = 0;
  let most = 0;
  const section = async () => {
    inside++;
    most = Math.max(most, inside);
    await tick();
    inside--;
  };
  const failing = lock.exclusive(async () => {
    throw new Error('flush failed');
  });
  await Promise.all([lock.exclusive(section), lock.exclusive(section), failing.catch(() => undefined)]);
  assert.equal(most, 1);
  await assert.rejects(failing, /flush failed/);
  assert.equal(await lock.read(async () => 'read after'), 'read after');
});

const POLICY: BufferPolicy = {
  minTimeS: 1,
  maxTimeS: 10,
  minRows: 100,
  maxRows: 1000,
  minBytes: 10,
  maxBytes: 1_000_000,
};

function flusher(policy = POLICY) {
  const flushes: number[] = [];
  const f = new BufferFlusher({
    key: 'default.s',
    policy,
    flush: async () => {
      flushes.push(f.bufferedRows);
    },
    patienceMs: 0,
    checkEveryMs: 60_000,
  });
  return { f, flushes };
}

test('the flusher applies the engine rule: all minimums, or any maximum', async () => {
  const t0 = 1_000_000;
  {
    const { f, flushes } = flusher();
    f.inserted(500, 5000, t0);
    f.inserted(100, 1000, t0 + 500); // rows and bytes past the minimums, but not a second yet
    await tick();
    assert.deepEqual(flushes, []);
    f.inserted(1, 10, t0 + 1000); // a second: every minimum reached
    await tick();
    assert.equal(f.flushCount, 1);
    assert.equal(f.bufferedRows, 0);
    f.discard();
  }
  {
    const { f } = flusher();
    f.inserted(1000, 10, t0); // the row maximum, at once
    await tick();
    assert.equal(f.flushCount, 1);
    f.discard();
  }
  {
    const { f } = flusher();
    f.inserted(1, 1, t0);
    f.inserted(1, 1, t0 + 9_999);
    await tick();
    assert.equal(f.flushCount, 0, 'few rows wait');
    f.inserted(1, 1, t0 + 10_000); // the time maximum
    await tick();
    assert.equal(f.flushCount, 1);
    f.discard();
  }
});

test('a failed flush keeps its rows counted, and close flushes what is left', async () => {
  let fail = true;
  let flushed = 0;
  const f = new BufferFlusher({
    key: 'default.s',
    policy: POLICY,
    flush: async () => {
      if (fail) throw new Error('engine busy');
      flushed++;
    },
    patienceMs: 0,
    checkEveryMs: 60_000,
  });
  f.inserted(2000, 10, 0);
  await tick();
  await tick();
  assert.equal(f.bufferedRows, 2000, 'rows of a failed flush stay buffered');
  fail = false;
  await f.close();
  assert.equal(flushed, 1);
  assert.equal(f.bufferedRows, 0);
});
