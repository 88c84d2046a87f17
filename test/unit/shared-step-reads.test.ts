import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SharedStepReads } from '../../src/streaming/shared-step-reads.ts';

test('a member alone keeps its range and reads by itself', async () => {
  const s = new SharedStepReads();
  const leave = s.join('g');
  assert.equal(s.align('g', 0, 10), 10);
  let runs = 0;
  assert.equal(await s.read('g', 'sql', async () => `r${++runs}`), 'r1');
  assert.equal(await s.read('g', 'sql', async () => `r${++runs}`), 'r2');
  assert.equal(s.kept, 0);
  leave();
});

test('members at one position step over the range the first chose, and read it once', async () => {
  const s = new SharedStepReads();
  const leaves = [s.join('g'), s.join('g'), s.join('g')];
  assert.equal(s.align('g', 5, 20), 20);
  // A member that saw a later commit still takes the chosen range.
  assert.equal(s.align('g', 5, 25), 20);
  let runs = 0;
  const run = async () => {
    runs++;
    await new Promise((r) => setTimeout(r, 5));
    return 'rows';
  };
  const texts = await Promise.all([s.read('g', 'q(5,20]', run), s.read('g', 'q(5,20]', run)]);
  assert.deepEqual(texts, ['rows', 'rows']);
  assert.equal(await s.read('g', 'q(5,20]', run), 'rows');
  assert.equal(runs, 1);
  assert.equal(s.hits, 2);
  // Every member took it: nothing is kept.
  assert.equal(s.kept, 0);
  for (const l of leaves) l();
});

test('a member elsewhere steps up to the next chosen start and joins from there', () => {
  const s = new SharedStepReads();
  s.join('g');
  s.join('g');
  assert.equal(s.align('g', 10, 30), 30);
  assert.equal(s.align('g', 3, 30), 10);
  assert.equal(s.align('g', 10, 40), 30);
  // Other groups are separate.
  s.join('h');
  s.join('h');
  assert.equal(s.align('h', 3, 30), 30);
});

test('a failed read is not shared; a result nobody else takes is dropped after its time', async () => {
  const s = new SharedStepReads({ ttlMs: 1 });
  s.join('g');
  s.join('g');
  await assert.rejects(
    s.read('g', 'q', async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(s.kept, 0);
  assert.equal(await s.read('g', 'q', async () => 'a'), 'a');
  assert.equal(s.kept, 1);
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(await s.read('g', 'other', async () => 'b'), 'b');
  assert.equal(await s.read('g', 'q', async () => 'fresh'), 'fresh');
});

test('leaving the group drops what it kept', async () => {
  const s = new SharedStepReads();
  const a = s.join('g');
  const b = s.join('g');
  await s.read('g', 'q', async () => 'x');
  assert.equal(s.kept, 1);
  a();
  a();
  assert.equal(s.members('g'), 1);
  b();
  assert.equal(s.kept, 0);
  assert.equal(s.members('g'), 0);
});

test('a member far behind catches up to the newest range in one step; old ranges are forgotten', async () => {
  const s = new SharedStepReads({ ttlMs: 20 });
  s.join('g');
  s.join('g');
  assert.equal(s.align('g', 10, 20), 20);
  assert.equal(s.align('g', 20, 30), 30);
  // Not along every range the others took: straight to the newest one's start.
  assert.equal(s.align('g', 0, 30), 20);
  assert.equal(s.align('g', 20, 30), 30);
  await new Promise((r) => setTimeout(r, 30));
  // Ranges chosen long ago are not followed: a member there reads all it has.
  assert.equal(s.align('g', 10, 40), 40);
  assert.equal(s.align('g', 5, 40), 10);
});

test('views sharing a stream cut a new range at most every gap, and follow a cut range at once', () => {
  const s = new SharedStepReads({ groupPacing: { maxGapMs: 200, costRatio: 2 } });
  s.join('g');
  assert.equal(s.dueAt('g', 0), 0, 'alone: at once');
  s.join('g');
  assert.equal(s.dueAt('g', 0), 0, 'no range cut yet: at once');
  s.stepped('g', 30);
  const before = Date.now();
  assert.equal(s.align('g', 0, 10), 10);
  // The other member stands where the range starts: it follows at once.
  assert.equal(s.dueAt('g', 0), 0);
  // Past the cut range, the next one is due two mean steps (60 ms) after the last cut.
  const due = s.dueAt('g', 10);
  assert.ok(due >= before + 60 && due <= Date.now() + 60, `${due - before}`);
  // Slow steps: the gap stops at maxGapMs.
  for (let i = 0; i < 30; i++) s.stepped('g', 1000);
  assert.ok(s.dueAt('g', 10) <= Date.now() + 200);
  assert.ok(s.dueAt('g', 10) > Date.now() + 100);
  // A member behind catches up to the range others cut, at once.
  assert.equal(s.dueAt('g', -5), 0);
  // Off: always at once.
  const off = new SharedStepReads({ groupPacing: { maxGapMs: 0 } });
  off.join('g');
  off.join('g');
  off.align('g', 0, 10);
  assert.equal(off.dueAt('g', 10), 0);
});
