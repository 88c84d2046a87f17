/**
 * FileCheckpointStore on a real engine and disk: a save copies the state tables and replaces
 * checkpoint.json atomically; a save that crashed half way leaves the previous checkpoint in force
 * and its copies are dropped on load; the journal survives a torn last line; destroy() removes
 * files and tables; the store survives an engine restart (a new process on the same data).
 */
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ChdbEngine } from '../../src/engine/chdb-engine.ts';
import { CHECKPOINT_DB } from '../../src/streaming/checkpoint/checkpoint-tables.ts';
import { FileCheckpointStore, isValidOwnerId } from '../../src/streaming/checkpoint/file-checkpoint-store.ts';
import type { ExecutionCheckpoint } from '../../src/streaming/durability.ts';

let dir: string;
let engine: ChdbEngine;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tributary-ckpt-'));
  engine = new ChdbEngine({ dataPath: join(dir, 'engine'), sessions: { system: 1, user: 1 } });
  await engine.query('CREATE DATABASE IF NOT EXISTS live');
  await engine.query('CREATE TABLE live.state (k String, s AggregateFunction(sum, Int64)) ENGINE = Memory');
  await engine.query("INSERT INTO live.state SELECT 'a', sumState(toInt64(5))");
});
after(async () => {
  await engine.close();
  await rm(dir, { recursive: true, force: true });
});

const savedTables = async () =>
  (await engine.query(`SELECT name FROM system.tables WHERE database = '${CHECKPOINT_DB}' ORDER BY name`))
    .text()
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as [string])[0]);

function checkpoint(seq: number, tables: Record<string, string> = {}): ExecutionCheckpoint {
  return {
    seq,
    processedSn: { 'default.s': seq * 10 },
    processedTime: 0,
    savedAt: Date.now(),
    state: { seq },
    tables,
  };
}

test('save copies the state tables into the checkpoint database and load answers the copies', async () => {
  const store = new FileCheckpointStore(engine, dir, 'owner-1');
  assert.equal(await store.load(), undefined);
  await store.save(checkpoint(0, { state: 'live.state' }));
  const loaded = await store.load();
  assert.equal(loaded?.seq, 0);
  assert.deepEqual(loaded?.state, { seq: 0 });
  const copy = loaded?.tables.state;
  assert.ok(copy?.startsWith(`\`${CHECKPOINT_DB}\`.`), copy);
  const merged = (await engine.query(`SELECT k, sumMerge(s) FROM ${copy} GROUP BY k`)).text();
  assert.deepEqual(JSON.parse(merged), ['a', 5]);
  // A second save replaces the copies of the first.
  await engine.query("INSERT INTO live.state SELECT 'b', sumState(toInt64(7))");
  await store.save(checkpoint(3, { state: 'live.state' }));
  const second = await store.load();
  assert.equal(second?.seq, 3);
  assert.notEqual(second?.tables.state, copy);
  assert.equal((await savedTables()).length, 1, 'the previous copies are dropped');
  await store.destroy();
  assert.deepEqual(await savedTables(), []);
});

test('a save that crashed half way leaves the previous checkpoint in force; its copies go on load', async () => {
  const store = new FileCheckpointStore(engine, dir, 'owner-2');
  await store.save(checkpoint(1, { state: 'live.state' }));
  const [kept] = await savedTables();
  assert.ok(kept);
  // The crash: the next save's table copy exists and a temp file half written, no rename.
  await engine.query(
    `CREATE TABLE ${CHECKPOINT_DB}.\`${kept.replace('__0__', '__1__')}\` ENGINE = MergeTree ORDER BY tuple() AS SELECT 1 AS x`,
  );
  await writeFile(join(store.dir, 'checkpoint.json.tmp'), '{"format":1,"numb');
  const again = new FileCheckpointStore(engine, dir, 'owner-2');
  const loaded = await again.load();
  assert.equal(loaded?.seq, 1);
  assert.deepEqual(await savedTables(), [kept], 'the unfinished save left no table behind');
  await again.destroy();
});

test('saves after the first drop the previous copies by name: no table, no engine call', async () => {
  const calls: string[] = [];
  const counting = Object.create(engine) as ChdbEngine;
  counting.query = (sql, o) => {
    calls.push(sql);
    return engine.query(sql, o);
  };
  const store = new FileCheckpointStore(counting, dir, 'owner-5');
  await store.save(checkpoint(0));
  calls.length = 0;
  await store.save(checkpoint(1));
  await store.save(checkpoint(2));
  assert.equal(calls.length, 0, `a view without state tables checkpoints without the engine: ${calls}`);
  // With tables: the copies of the previous save go, nothing else is listed.
  await store.save(checkpoint(3, { state: 'live.state' }));
  await store.save(checkpoint(4, { state: 'live.state' }));
  assert.ok(!calls.some((q) => q.includes('system.tables')), calls.join('\n'));
  assert.equal((await savedTables()).filter((t) => t.startsWith('owner_5')).length, 1);
  await store.destroy();
});

test('a save that failed half way leaves copies the next save finds and drops', async () => {
  const store = new FileCheckpointStore(engine, dir, 'owner-6');
  await store.save(checkpoint(0, { state: 'live.state' }));
  // The second table does not exist: the first copy is made, then the save fails.
  await assert.rejects(store.save(checkpoint(1, { state: 'live.state', other: 'live.missing' })));
  assert.equal((await savedTables()).filter((t) => t.startsWith('owner_6')).length, 2);
  await store.save(checkpoint(2, { state: 'live.state' }));
  const left = (await savedTables()).filter((t) => t.startsWith('owner_6'));
  assert.equal(left.length, 1, left.join(', '));
  assert.equal((await store.load())?.seq, 2);
  await store.destroy();
});

test('the journal: entries after the checkpoint, a torn last line ignored then cut, truncated by a save', async () => {
  const store = new FileCheckpointStore(engine, dir, 'owner-3');
  await store.save(checkpoint(0));
  await store.append({ seq: 1, kind: 'step', ranges: [[-1, 4]] });
  await store.append({ seq: 2, kind: 'periodic' });
  await store.close();
  // A crash in the middle of the third append.
  await appendFile(join(store.dir, 'journal.log'), '{"seq":3,"kind":"st');
  const restarted = new FileCheckpointStore(engine, dir, 'owner-3');
  await restarted.load();
  assert.deepEqual(await restarted.journal(), [
    { seq: 1, kind: 'step', ranges: [[-1, 4]] },
    { seq: 2, kind: 'periodic' },
  ]);
  await restarted.append({ seq: 3, kind: 'step', ranges: [[4, 9]], backfill: true });
  assert.equal((await restarted.journal()).length, 3, 'the torn line was cut before the next append');
  const text = await readFile(join(restarted.dir, 'journal.log'), 'utf8');
  assert.equal(text.split('\n').filter(Boolean).length, 3);
  // A checkpoint holding entries 1-2 leaves entry 3 only... and truncates the file.
  await restarted.save(checkpoint(3));
  assert.deepEqual(await restarted.journal(), []);
  await restarted.append({ seq: 4, kind: 'timeout' });
  assert.deepEqual(await restarted.journal(), [{ seq: 4, kind: 'timeout' }]);
  await restarted.destroy();
  assert.ok(!(await readdir(join(dir, 'checkpoints'))).includes('owner-3'));
});

test('entries the checkpoint already holds are not answered (a crash between save and truncate)', async () => {
  const store = new FileCheckpointStore(engine, dir, 'owner-4');
  await store.append({ seq: 1, kind: 'periodic' });
  await store.append({ seq: 2, kind: 'periodic' });
  await store.save(checkpoint(1));
  await store.append({ seq: 2, kind: 'periodic' });
  await store.close();
  // Put the pre-checkpoint entry back as if the truncate never happened.
  await writeFile(
    join(store.dir, 'journal.log'),
    '{"seq":1,"kind":"periodic"}\n{"seq":2,"kind":"periodic"}\n',
  );
  assert.deepEqual(await new FileCheckpointStore(engine, dir, 'owner-4').journal(), [
    { seq: 2, kind: 'periodic' },
  ]);
  await store.destroy();
});

test('owner ids that are not plain names are refused (no path outside the checkpoints directory)', () => {
  for (const bad of ['..', '.', 'a/b', '../x', '', 'a b', 'x'.repeat(200)])
    assert.equal(isValidOwnerId(bad), false, bad);
  assert.ok(isValidOwnerId('0f6b1c2e-3d4a-4b5c-8d9e-0a1b2c3d4e5f'));
  assert.throws(() => new FileCheckpointStore(engine, dir, '../etc'));
});
