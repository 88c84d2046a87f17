import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { CommittedRange } from '../../src/stream/committed-range-notifier.ts';
import { IdempotencyWindow } from '../../src/stream/idempotency-window.ts';
import type { PreparedBatch } from '../../src/stream/ingest-batch.ts';
import { ProducerMarks } from '../../src/stream/producer-marks.ts';
import { type InsertUnit, StreamWriter } from '../../src/stream/stream-writer.ts';
import { WriteAheadLog } from '../../src/stream/write-ahead-log.ts';

const dirs: string[] = [];
const wals: WriteAheadLog[] = [];
after(async () => {
  for (const w of wals) await w.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

function batch(values: number[], extra: Partial<PreparedBatch> = {}): PreparedBatch {
  return {
    rows: values.length,
    shape: 'C\u0001v',
    format: 'JSONCompactEachRow',
    columns: ['v'],
    payload: Buffer.from(values.map((v) => `[${v}]`).join(',')),
    ...extra,
  };
}

interface Harness {
  writer: StreamWriter;
  wal: WriteAheadLog;
  inserts: InsertUnit[];
  ranges: CommittedRange[];
  /** Rows the fake engine holds, by sequence number. */
  table: Map<number, string>;
}

/** Holds whoever waits on it until `open()`; `entered` resolves when the first waiter arrives. */
function gate(): { wait: () => Promise<void>; open: () => void; entered: Promise<void> } {
  let open!: () => void;
  let enter!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  const entered = new Promise<void>((r) => {
    enter = r;
  });
  return {
    wait: () => {
      enter();
      return opened;
    },
    open,
    entered,
  };
}

/** `delay`: ms each engine insert takes, or a wait it must pass (a gate the test opens). */
async function setup(
  refuse: (unit: InsertUnit) => boolean = () => false,
  delay: number | (() => Promise<void>) = 2,
): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'tributary-writer-'));
  dirs.push(dir);
  const wal = await WriteAheadLog.open(dir);
  wals.push(wal);
  const inserts: InsertUnit[] = [];
  const ranges: CommittedRange[] = [];
  const table = new Map<number, string>();
  const writer = new StreamWriter({
    key: 'default.t',
    wal,
    nextSn: 0,
    idempotency: new IdempotencyWindow(),
    marks: new ProducerMarks(),
    insert: async (unit) => {
      await (typeof delay === 'number' ? new Promise((r) => setTimeout(r, delay)) : delay());
      if (refuse(unit))
        throw new Error('Code: 27. DB::Exception: Cannot parse input (CANNOT_PARSE_INPUT_ASSERTION_FAILED)');
      inserts.push(unit);
      const rows = unit.payload.toString().split(/,|\n/);
      rows.forEach((r, i) => {
        table.set(unit.first + i, r);
      });
    },
    onCommitted: (r) => ranges.push(r),
  });
  return { writer, wal, inserts, ranges, table };
}

async function walRecords(wal: WriteAheadLog): Promise<Array<[number, number]>> {
  const out: Array<[number, number]> = [];
  for await (const r of wal.recordsFrom(0)) out.push([r.header.first, r.header.count]);
  return out;
}

test('concurrent requests are committed together with contiguous sequence numbers', async () => {
  const h = await setup();
  const results = await Promise.all(
    Array.from({ length: 40 }, (_, i) => h.writer.submit(batch([i * 10, i * 10 + 1, i * 10 + 2]))),
  );
  assert.ok(h.inserts.length < 40, `${h.inserts.length} inserts for 40 requests`);
  const sns = results
    .flatMap((r) => Array.from({ length: r.count }, (_, k) => r.fromSn + k))
    .sort((a, b) => a - b);
  assert.deepEqual(
    sns,
    Array.from({ length: 120 }, (_, i) => i),
  );
  assert.equal(h.writer.committedSn, 119);
  // Ranges are published in order, contiguous, and each row is in the table once.
  let next = 0;
  for (const r of h.ranges) {
    assert.equal(r.fromSn, next);
    next = r.toSn + 1;
  }
  assert.equal(next, 120);
  assert.equal(h.table.size, 120);
  const recs = await walRecords(h.wal);
  assert.equal(
    recs.reduce((n, [, c]) => n + c, 0),
    120,
  );
});

test('a request the engine refuses fails alone, writes nothing, and leaves no gap', async () => {
  const h = await setup((unit) => unit.payload.toString().includes('666'));
  const outcomes = await Promise.allSettled(
    Array.from({ length: 12 }, (_, i) => h.writer.submit(batch(i === 5 ? [1, 666] : [i * 100, i * 100 + 1]))),
  );
  const failed = outcomes.filter((o) => o.status === 'rejected');
  assert.equal(failed.length, 1);
  assert.match(String((failed[0] as PromiseRejectedResult).reason), /Cannot parse input/);
  assert.equal((failed[0] as PromiseRejectedResult).reason.code, 27);
  assert.equal(h.writer.committedSn, 21);
  assert.deepEqual(
    [...h.table.keys()].sort((a, b) => a - b),
    Array.from({ length: 22 }, (_, i) => i),
  );
  assert.ok(![...h.table.values()].includes('[666]'));
  const recs = await walRecords(h.wal);
  assert.equal(
    recs.reduce((n, [, c]) => n + c, 0),
    22,
    JSON.stringify(recs),
  );
  let next = 0;
  for (const [first, count] of recs) {
    assert.equal(first, next);
    next += count;
  }
});

test('when the engine refuses the request bytes, the re-encoded values are tried', async () => {
  const h = await setup((unit) => unit.payload.toString().includes('1.0'));
  const r = await h.writer.submit(
    batch([1, 2], { payload: Buffer.from('[1.0],[2]'), reencode: () => Buffer.from('[1],[2]') }),
  );
  assert.deepEqual(r, { fromSn: 0, count: 2 });
  assert.deepEqual([...h.table.values()], ['[1]', '[2]']);
  assert.deepEqual(await walRecords(h.wal), [[0, 2]]);
});

test('an idempotency id writes once, also when the retry arrives while the first is in flight', async () => {
  const h = await setup(() => false, 20);
  const [a, b] = await Promise.all([
    h.writer.submit(batch([1, 2], { idempotencyId: 'req-1' })),
    h.writer.submit(batch([1, 2], { idempotencyId: 'req-1' })),
  ]);
  assert.deepEqual(a, { fromSn: 0, count: 2 });
  assert.equal(b?.fromSn, 0);
  assert.equal(b?.duplicate, true);
  const c = await h.writer.submit(batch([1, 2], { idempotencyId: 'req-1' }));
  assert.equal(c.duplicate, true);
  await h.writer.submit(batch([3], { idempotencyId: 'req-2' }));
  assert.equal(h.table.size, 3);
  const recs = [];
  for await (const r of h.wal.recordsFrom(0)) recs.push(r.header.ids);
  assert.deepEqual(recs, [[['req-1', 0, 2]], [['req-2', 2, 1]]]);
});

test('a failed first attempt of an id lets its retry write', async () => {
  let refuseOnce = true;
  const h = await setup(() => {
    const r = refuseOnce;
    refuseOnce = false;
    return r;
  });
  await assert.rejects(h.writer.submit(batch([7], { idempotencyId: 'x' })));
  const r = await h.writer.submit(batch([7], { idempotencyId: 'x' }));
  assert.deepEqual(r, { fromSn: 0, count: 1 });
});

test('empty batches write nothing', async () => {
  const h = await setup();
  assert.deepEqual(await h.writer.submit(batch([])), { fromSn: 0, count: 0 });
  assert.equal(h.inserts.length, 0);
  assert.equal(h.wal.bytes, 0);
});

test('a producer tag not after the last one is acknowledged without writing; the WAL record names the tag', async () => {
  const h = await setup();
  const tagged = (values: number[], seq: number, part: number) =>
    batch(values, { producer: { id: 'mv-1', tag: { seq, part } } });
  const a = await h.writer.submit(tagged([1, 2], 1, 0));
  assert.equal(a.count, 2);
  const again = await h.writer.submit(tagged([1, 2], 1, 0));
  assert.deepEqual([again.count, again.duplicate], [0, true]);
  const older = await h.writer.submit(tagged([9], 0, 5));
  assert.equal(older.count, 0);
  // Another producer has its own marks; the next part of the same event is written.
  assert.equal(
    (await h.writer.submit(batch([3], { producer: { id: 'mv-2', tag: { seq: 0, part: 0 } } }))).count,
    1,
  );
  assert.equal((await h.writer.submit(tagged([4], 1, 1))).count, 1);
  assert.deepEqual([...h.table.values()], ['[1]', '[2]', '[3]', '[4]']);
  const headers: unknown[] = [];
  for await (const r of h.wal.recordsFrom(0)) headers.push(r.header.producers);
  assert.deepEqual(headers, [[['mv-1', 1, 0]], [['mv-2', 0, 0]], [['mv-1', 1, 1]]]);
  // The segment summary keeps the largest tag per producer (what a restart rebuilds the marks from).
  const summary = h.wal.summaries().at(-1);
  assert.deepEqual([...(summary?.producers ?? [])].sort(), [
    ['mv-1', 1, 1],
    ['mv-2', 0, 0],
  ]);
});

test('a replayed tag arriving while the first write is in flight is dropped once that lands', async () => {
  const h = await setup(() => false, 20);
  const b = batch([7], { producer: { id: 'p', tag: { seq: 3, part: 0 } } });
  const [first, second] = await Promise.all([h.writer.submit(b), h.writer.submit(b)]);
  assert.equal(first.count, 1);
  assert.equal(second.count, 0);
  assert.deepEqual([...h.table.values()], ['[7]']);
});

test('a tagged write the engine refuses does not raise the mark: its retry writes', async () => {
  let refuse = true;
  const h = await setup(() => refuse);
  const b = batch([5], { producer: { id: 'p', tag: { seq: 1, part: 0 } } });
  await assert.rejects(h.writer.submit(b));
  refuse = false;
  assert.equal((await h.writer.submit(b)).count, 1);
  const summary = h.wal.summaries().at(-1);
  assert.deepEqual(summary?.producers, [['p', 1, 0]]);
});

test("a group of materialized views' outputs is marked derived (its insert runs with the views' steps); one with other rows is not", async () => {
  const h = await setup();
  await h.writer.submit(batch([1], { producer: { id: 'mv-1', tag: { seq: 1, part: 0 } } }));
  await h.writer.submit(batch([2]));
  assert.deepEqual(
    h.inserts.map((u) => u.derived ?? false),
    [true, false],
  );
});

/** Resolve once the WAL holds `n` records (the writer appends while the engine inserts). */
async function walHolds(wal: WriteAheadLog, n: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if ((await walRecords(wal)).length >= n) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`the WAL never held ${n} records`);
}

async function walTimes(wal: WriteAheadLog): Promise<number[]> {
  const out: number[] = [];
  for await (const r of wal.recordsFrom(0)) out.push(r.header.time);
  return out;
}

test('groups made durable while the engine inserts share a commit time and reach it as one insert', async () => {
  const engine = gate();
  const h = await setup(() => false, engine.wait);
  const a = h.writer.submit(batch([1]));
  await engine.entered; // A is with the engine until the gate opens
  const b = h.writer.submit(batch([2, 3]));
  await walHolds(h.wal, 2); // B is durable, waiting for the engine
  const c = h.writer.submit(batch([4]));
  await walHolds(h.wal, 3); // C too, in its own WAL record
  engine.open();
  assert.deepEqual(await Promise.all([a, b, c]), [
    { fromSn: 0, count: 1 },
    { fromSn: 1, count: 2 },
    { fromSn: 3, count: 1 },
  ]);
  assert.deepEqual(await walRecords(h.wal), [
    [0, 1],
    [1, 2],
    [3, 1],
  ]);
  const times = await walTimes(h.wal);
  assert.equal(times[1], times[2], 'B and C share a commit time');
  assert.ok((times[0] as number) <= (times[1] as number), 'times never go back');
  // Two engine inserts: A, then B and C together, numbered from B's first sequence number.
  assert.deepEqual(
    h.inserts.map((u) => [u.first, u.count, u.time]),
    [
      [0, 1, times[0]],
      [1, 3, times[1]],
    ],
  );
  assert.equal(h.inserts[1]?.payload.toString(), '[2],[3]\n[4]');
  assert.deepEqual(h.writer.counters, { requests: 3, rows: 4, appends: 3, inserts: 2 });
  // Each request's range is still published on its own, in order.
  assert.deepEqual(
    h.ranges.map((r) => [r.fromSn, r.toSn]),
    [
      [0, 0],
      [1, 2],
      [3, 3],
    ],
  );
});

test('a merged insert the engine refuses: only the guilty request fails, the WAL and numbering stay exact', async () => {
  const engine = gate();
  const h = await setup((unit) => unit.payload.toString().includes('666'), engine.wait);
  const a = h.writer.submit(batch([1]));
  await engine.entered; // A is with the engine until the gate opens
  const b = h.writer.submit(batch([2]));
  await walHolds(h.wal, 2);
  const bad = h.writer.submit(batch([666]));
  await walHolds(h.wal, 3);
  engine.open();
  const c = h.writer.submit(batch([3]));
  const [ra, rb, rbad, rc] = await Promise.allSettled([a, b, bad, c]);
  assert.deepEqual(ra, { status: 'fulfilled', value: { fromSn: 0, count: 1 } });
  assert.deepEqual(rb, { status: 'fulfilled', value: { fromSn: 1, count: 1 } });
  assert.equal(rbad?.status, 'rejected');
  assert.equal((rbad as PromiseRejectedResult).reason.code, 27);
  assert.deepEqual(rc, { status: 'fulfilled', value: { fromSn: 2, count: 1 } });
  assert.deepEqual(
    [...h.table.entries()].sort((x, y) => x[0] - y[0]),
    [
      [0, '[1]'],
      [1, '[2]'],
      [2, '[3]'],
    ],
  );
  assert.deepEqual(await walRecords(h.wal), [
    [0, 1],
    [1, 1],
    [2, 1],
  ]);
  assert.equal(h.writer.committedSn, 2);
});

test('a free engine waits for an append that can join its insert instead of inserting twice', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tributary-writer-'));
  dirs.push(dir);
  const real = await WriteAheadLog.open(dir);
  wals.push(real);
  // The third append (C's) is held: it is still being written when the engine finishes A.
  const slowAppend = gate();
  const engine = gate();
  let appends = 0;
  const wal = new Proxy(real, {
    get(target, prop, receiver) {
      if (prop === 'append')
        return async (...args: Parameters<WriteAheadLog['append']>) => {
          if (appends++ === 2) await slowAppend.wait();
          return target.append(...args);
        };
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const inserts: InsertUnit[] = [];
  const writer = new StreamWriter({
    key: 'default.t',
    wal,
    nextSn: 0,
    idempotency: new IdempotencyWindow(),
    marks: new ProducerMarks(),
    insert: async (unit) => {
      if (unit.first === 0) await engine.wait();
      inserts.push(unit);
    },
    onCommitted: () => undefined,
  });
  const a = writer.submit(batch([1]));
  await engine.entered; // A is with the engine until its gate opens
  const b = writer.submit(batch([2]));
  await walHolds(real, 2); // B is durable at once
  const c = writer.submit(batch([3]));
  await slowAppend.entered; // C's append is being written
  engine.open(); // A's insert ends while C's append is still in flight
  for (let i = 0; i < 500 && inserts.length === 0; i++) await new Promise((r) => setTimeout(r, 2));
  await new Promise((r) => setTimeout(r, 20)); // the free engine must wait for C, not insert B alone
  slowAppend.open();
  await Promise.all([a, b, c]);
  assert.deepEqual(
    inserts.map((u) => [u.first, u.count]),
    [
      [0, 1],
      [1, 2],
    ],
  );
  assert.deepEqual(writer.counters, { requests: 3, rows: 3, appends: 3, inserts: 2 });
});

test('a request with staged rows is an insert of its own, carrying them; the others are still merged', async () => {
  const h = await setup(() => false, 20);
  const staged = {
    format: 'JSONCompactEachRow' as const,
    columns: ['v'],
    payload: Buffer.from('[5],[6]'),
    staged: Promise.resolve(2),
    take: () => true,
  };
  const first = h.writer.submit(batch([1]));
  // Queued while the first is written: the staged one between two ordinary ones.
  const results = await Promise.all([
    first,
    h.writer.submit(batch([2, 3])),
    h.writer.submit(batch([5, 6], { staged })),
    h.writer.submit(batch([7])),
  ]);
  assert.deepEqual(
    results.map((r) => r.fromSn),
    [0, 1, 4, 3],
  );
  const units = h.inserts.map((u) => [u.first, u.count, u.staged === staged]);
  // [1] alone; then the group's ordinary requests as one run ([2,3] and [7]), the staged [5,6]
  // a run and an insert of its own.
  assert.deepEqual(units, [
    [0, 1, false],
    [1, 3, false],
    [4, 2, true],
  ]);
  assert.deepEqual(await walRecords(h.wal), [
    [0, 1],
    [1, 3],
    [4, 2],
  ]);
});

test('the writer is idle as soon as every request is answered, refused ones included', async () => {
  const h = await setup((unit) => unit.payload.toString().includes('666'));
  assert.equal(h.writer.idle, true);
  const pending = h.writer.submit(batch([1]));
  assert.equal(h.writer.idle, false);
  // Read in the answer's own continuation: no extra promise hop for the commit loop to wind down.
  const idleAtAnswer = await pending.then(() => h.writer.idle);
  assert.equal(idleAtAnswer, true);
  const refused = await h.writer.submit(batch([666])).then(
    () => undefined,
    () => h.writer.idle,
  );
  assert.equal(refused, true);
  // Several in flight, one refused: idle only once all are answered.
  const all = Array.from({ length: 6 }, (_, i) => h.writer.submit(batch(i === 2 ? [666] : [i])));
  assert.equal(h.writer.idle, false);
  await Promise.allSettled(all);
  assert.equal(h.writer.idle, true);
});
