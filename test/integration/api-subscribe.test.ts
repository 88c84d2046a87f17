/**
 * Proton's checkpointed queries through POST /v1beta2/queries: SUBSCRIBE TO runs a streaming query
 * durably under its query id; RECOVER FROM '<id>' runs it again under the same id from its last
 * checkpoint (a cancel saves one), also after a server restart; UNSUBSCRIBE TO removes its
 * checkpoints. Unknown ids, a RECOVER of a running query and shapes that cannot be checkpointed
 * answer clear errors.
 */
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { StreamingApi } from '../helpers/streaming-client.ts';

let api: StreamingApi;
before(async () => {
  api = await StreamingApi.open();
});
after(async () => {
  await api?.close();
});

const checkpointDirs = async () => readdir(join(api.h.dataDir, 'checkpoints')).catch(() => [] as string[]);

test('SUBSCRIBE, cancel, RECOVER continues after the checkpoint under the same id; UNSUBSCRIBE removes it', async () => {
  const st = await api.createStream('sub', '(i int, s string)');
  const q = await api.start(
    `subscribe to select i, s from ${st} settings seek_to='earliest', checkpoint_interval=1`,
  );
  assert.deepEqual(q.header, ['i', 's']);
  assert.ok((await checkpointDirs()).includes(q.id), 'the subscription owns a checkpoint directory');
  await api.exec(`insert into ${st}(i, s) values (1, 's1')`);
  await q.waitForRows(1);
  assert.equal((await q.cancel()).status, 'canceled');
  // Rows committed while nobody runs the query are read by the recovered one.
  await api.exec(`insert into ${st}(i, s) values (2, 's2')`);
  const r = await api.start(`recover from '${q.id}'`);
  assert.equal(r.id, q.id, 'a recovered query keeps its id');
  await r.waitForRows(1);
  await api.exec(`insert into ${st}(i, s) values (3, 's3')`);
  await r.waitForRows(2);
  assert.deepEqual(r.rows, [
    [2, 's2'],
    [3, 's3'],
  ]);
  // Recovering a query that runs: 409, Proton's QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING.
  const running = await api.startError(`recover from '${q.id}'`);
  assert.equal(running.status, 409);
  assert.equal(running.code, 216);
  // UNSUBSCRIBE stops it and removes the checkpoints, leaving only Proton's delete mark.
  await api.exec(`unsubscribe to '${q.id}'`);
  assert.equal((await r.waitForEnd()).status !== 'running', true);
  assert.deepEqual(await readdir(join(api.h.dataDir, 'checkpoints', q.id)), ['unsubscribed.json']);
  // During the grace period a RECOVER answers QUERY_WAS_CANCELLED (394), as Proton's does.
  const unsubscribed = await api.startError(`recover from '${q.id}'`);
  assert.deepEqual([unsubscribed.status, unsubscribed.code], [410, 394]);
  assert.match(unsubscribed.message, /unsubscribed/);
  // A second UNSUBSCRIBE does nothing.
  await api.exec(`unsubscribe to '${q.id}'`);
  // Once the grace period is over (here: the mark dated a minute back) the id is unknown.
  await writeFile(
    join(api.h.dataDir, 'checkpoints', q.id, 'unsubscribed.json'),
    JSON.stringify({ unsubscribedAt: Date.now() - 61_000 }),
  );
  const gone = await api.startError(`recover from '${q.id}'`);
  assert.deepEqual([gone.status, gone.code], [404, 2003]);
  assert.ok(!(await checkpointDirs()).includes(q.id), 'the expired mark went with its directory');
});

test('a subscribed global aggregation keeps its state across RECOVER', async () => {
  const st = await api.createStream('sub', '(i int, s string)');
  const q = await api.start(
    `subscribe to select count() as c, sum(i) as total from ${st} emit periodic 100ms settings seek_to='earliest', checkpoint_interval=1`,
  );
  await api.exec(`insert into ${st}(i, s) values (1, 'a'), (2, 'b'), (3, 'c')`);
  await q.waitForRows(1);
  assert.deepEqual(q.rows.at(-1), [3, 6]);
  await q.cancel();
  await api.exec(`insert into ${st}(i, s) values (10, 'd')`);
  const r = await api.start(`recover from '${q.id}'`);
  await r.waitForRows(1);
  assert.deepEqual(r.rows.at(-1), [4, 16], 'the count goes on from the checkpoint');
  await r.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});

test('periodic emits keep their cadence across RECOVER: one that fell due while away comes with the first rows', async () => {
  const st = await api.createStream('sub', '(i int, s string)');
  const q = await api.start(
    `subscribe to select max(i) from ${st} emit periodic 1h settings checkpoint_interval=1`,
  );
  await api.exec(`insert into ${st}(i, s) values (5, 'a')`);
  await q.waitForScanned(1);
  await q.cancel();
  // As if the hour had passed while the query was away: the checkpoint's next emit is overdue.
  const file = join(api.h.dataDir, 'checkpoints', q.id, 'checkpoint.json');
  const saved = JSON.parse(await readFile(file, 'utf8'));
  assert.equal(typeof saved.checkpoint.state.nextPeriodic, 'number');
  saved.checkpoint.state.nextPeriodic = Date.now() - 1;
  await writeFile(file, JSON.stringify(saved));
  await api.exec(`insert into ${st}(i, s) values (7, 'b')`);
  const r = await api.start(`recover from '${q.id}'`);
  await r.waitForRows(1);
  assert.deepEqual(r.rows, [[7]]);
  await r.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});

test('a subscribed join recovered later still joins new rows with the rows read before the checkpoint', async () => {
  const l = await api.createStream('subl', '(k int, a string)');
  const r = await api.createStream('subr', '(k int, b string)');
  const q = await api.start(`subscribe to select ${l}.a, ${r}.b from ${l} join ${r} on ${l}.k = ${r}.k`);
  await api.exec(`insert into ${l}(k, a) values (1, 'l1')`);
  await api.exec(`insert into ${r}(k, b) values (1, 'r1')`);
  await q.waitForRows(1);
  await q.cancel();
  // Committed while the query is away: the recovered query plans a new start position (latest),
  // yet the join must read both sides from where the subscription started.
  await api.exec(`insert into ${r}(k, b) values (1, 'r2')`);
  const rec = await api.start(`recover from '${q.id}'`);
  await rec.waitForRows(1);
  await api.exec(`insert into ${l}(k, a) values (1, 'l2')`);
  await rec.waitForRows(3);
  assert.deepEqual([...rec.rows].map((x) => x.join('-')).sort(), ['l1-r2', 'l2-r1', 'l2-r2']);
  await rec.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});

test('unknown ids, queries that are not streaming and bad settings answer clear errors', async () => {
  const dirsBefore = await checkpointDirs();
  const unknown = await api.startError("recover from '19000'");
  assert.deepEqual([unknown.status, unknown.code], [404, 2003]);
  assert.match(unknown.message, /19000/);
  const odd = await api.startError("recover from '../../etc'");
  assert.deepEqual([odd.status, odd.code], [404, 2003]);
  const unsub = await api.startError("unsubscribe to 'nope'");
  assert.deepEqual([unsub.status, unsub.code], [404, 2003]);
  const st = await api.createStream('sub', '(i int, s string)');
  const historical = await api.startError(`subscribe to select i from table(${st})`);
  assert.deepEqual([historical.status, historical.code], [400, 48]);
  const interval = await api.startError(`subscribe to select i from ${st} settings checkpoint_interval=0`);
  assert.deepEqual([interval.status, interval.code], [400, 36]);
  const left = (await checkpointDirs()).filter((d) => !dirsBefore.includes(d));
  assert.equal(left.length, 0, `refused subscriptions leave nothing behind: ${left.join(', ')}`);
});

test('RECOVER after a server restart continues from the checkpoint saved at shutdown', async () => {
  const st = await api.createStream('sub', '(i int, s string)');
  const q = await api.start(`subscribe to select i from ${st} where i > 0 settings checkpoint_interval=100`);
  await api.exec(`insert into ${st}(i, s) values (1, 'a'), (0, 'z')`);
  await q.waitForRows(1);
  // Shutdown cancels every query: the subscription saves its checkpoint on the way out.
  const h2 = await api.h.restart();
  api = await StreamingApi.attach(h2);
  await api.exec(`insert into ${st}(i, s) values (2, 'b')`);
  const r = await api.start(`recover from '${q.id}'`);
  await r.waitForRows(1);
  assert.deepEqual(r.rows, [[2]]);
  await r.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});

test('a recovered changelog() query retracts the version of a key read before the RECOVER', async () => {
  const st = await api.createStream('subcl', '(i int, k string)');
  const q = await api.start(
    `subscribe to select i, k, _tp_delta from changelog(${st}, k) settings checkpoint_interval=1`,
  );
  await api.exec(`insert into ${st}(i, k) values (1, 'k1')`);
  await q.waitForRows(1);
  assert.deepEqual(q.rows, [[1, 'k1', 1]]);
  await q.cancel();
  await api.exec(`insert into ${st}(i, k) values (2, 'k1')`);
  const r = await api.start(`recover from '${q.id}'`);
  await r.waitForRows(2);
  assert.deepEqual(r.rows, [
    [1, 'k1', -1],
    [2, 'k1', 1],
  ]);
  await r.cancel();
  await api.exec(`unsubscribe to '${q.id}'`);
});
