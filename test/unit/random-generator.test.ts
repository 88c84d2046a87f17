/**
 * RandomGenerator's life: it runs while at least one reader holds it, commits one interval's worth
 * at once, keeps the rate on average, and stops with the last reader. The engine is a stand-in
 * answering the requested number of rows (the SQL itself is covered by the integration tests).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Engine } from '../../src/engine/engine.ts';
import { RandomGenerator } from '../../src/random/random-generator.ts';
import type { StreamDefinition } from '../../src/stream/stream-definition.ts';

const definition = {
  db: 'default',
  name: 'r',
  columns: [
    { name: 'id', type: 'int32', engineType: 'Int32', default: { proton: 'rand()', engine: 'rand()' } },
  ],
} as unknown as StreamDefinition;

function setup(eps: number, intervalTimeMs: number) {
  const commits: number[] = [];
  const engine = {
    query: async (sql: string) => {
      const n = Number(/numbers\((\d+)\)/.exec(sql)?.[1] ?? 0);
      return { text: () => Array.from({ length: n }, (_, i) => `{"id":${i}}`).join('\n') };
    },
  } as unknown as Engine;
  const g = new RandomGenerator(
    { engine, commit: async (_db, _name, body) => void commits.push(body.toString().split('\n').length) },
    definition,
    { eps, intervalTimeMs, shards: 1 },
  );
  return { g, commits, total: () => commits.reduce((a, b) => a + b, 0) };
}

test('the first reader starts it with one interval at once; the last one stops it', async () => {
  const { g, commits, total } = setup(1000, 50);
  assert.equal(g.running, false);
  g.acquire();
  g.acquire();
  assert.equal(g.running, true);
  while (commits.length === 0) await sleep(5);
  assert.equal(commits[0], 50, 'one interval of rows at once (eps 1000 × 50 ms)');
  g.release();
  assert.equal(g.running, true, 'one reader left');
  while (commits.length < 3) await sleep(5);
  g.release();
  assert.equal(g.running, false);
  const atRelease = total();
  await sleep(300);
  assert.ok(total() - atRelease <= 50, 'at most the batch in flight at the release; nothing after');
  g.release(); // an extra release is harmless
  assert.equal(g.running, false);
});

test('eps below one: a row every 1/eps seconds, not a row per interval', async () => {
  const { g, total } = setup(0.01, 10);
  g.acquire();
  await sleep(300);
  g.release();
  assert.equal(total(), 0, 'the first row of eps 0.01 is due after 100 s');
});
