/**
 * Reads never miss rows while a stream's Buffer is flushed into its MergeTree.
 *
 * A Buffer read is not atomic with a flush (src/stream/flush-lock.ts); here the Buffer is flushed
 * after every insert while rows are ingested, read by a streaming tail, a streaming count and
 * historical counts, and every reader must see every acknowledged row exactly once.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type StreamingApi as Api, StreamingApi } from '../helpers/streaming-client.ts';
import { rows } from '../helpers/streams.ts';

let api: Api;
before(async () => {
  api = await StreamingApi.open({
    tuning: {
      // Flush as soon as anything is buffered (politely: at the first moment no read is inside).
      buffer: { minTimeS: 0, maxTimeS: 0, minRows: 1, maxRows: 1_000_000, minBytes: 0, maxBytes: 1 << 30 },
    },
  });
  await api.exec('CREATE STREAM flushy (n int64, pad string)');
});
after(async () => {
  await api.close();
});

const BATCHES = 240;
const PER_BATCH = 50;
const IN_FLIGHT = 4;

test('tail, streaming count and historical counts see every acknowledged row while the Buffer flushes', async () => {
  const tail = await api.start('SELECT n FROM flushy', { batchMs: 10 });
  const total = await api.start('SELECT count() FROM flushy EMIT PERIODIC 50ms', { batchMs: 10 });
  let acked = 0;
  let next = 0;
  const pad = 'x'.repeat(200);
  const producer = async () => {
    while (next < BATCHES) {
      const b = next++;
      const data = Array.from({ length: PER_BATCH }, (_, i) => [b * PER_BATCH + i, pad]);
      await api.ingest('flushy', ['n', 'pad'], data);
      acked += PER_BATCH;
    }
  };
  // Historical counts while ingesting: each sees at least what was acknowledged before it began.
  const shortReads: string[] = [];
  let historical = 0;
  const reader = async () => {
    while (next < BATCHES) {
      const floor = acked;
      const q = await api.start('SELECT count() FROM table(flushy)');
      await q.waitForEnd();
      const seen = Number(q.rows[0]?.[0]);
      historical++;
      if (seen < floor) shortReads.push(`${seen} < ${floor}`);
    }
  };
  await Promise.all([...Array.from({ length: IN_FLIGHT }, producer), reader()]);
  const expected = BATCHES * PER_BATCH;

  const got = (await tail.waitForRows(expected)).map((r) => Number(r[0]));
  await tail.waitForQuiet(200);
  assert.equal(tail.rows.length, expected, 'no row twice');
  const sorted = [...got].sort((a, b) => a - b);
  assert.ok(
    sorted.every((v, i) => v === i),
    'every row once',
  );
  await tail.cancel();

  const deadline = Date.now() + 20_000;
  while (Number(total.rows.at(-1)?.[0]) !== expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(Number(total.rows.at(-1)?.[0]), expected, 'the streaming count reaches every row');
  const counts = total.rows.map((r) => Number(r[0]));
  assert.ok(
    counts.every((c, i) => i === 0 || c >= (counts[i - 1] as number)),
    `a streaming count never goes back: ${counts.join(',')}`,
  );
  await total.cancel();

  assert.ok(historical > 0);
  assert.deepEqual(shortReads, [], 'no historical count missed acknowledged rows');
  // The test means something only if the Buffer really was flushed while all this ran.
  const [[flushed]] = (await rows(api.h, 'SELECT count() FROM default.`.tp_history.flushy`')) as [[string]];
  assert.ok(Number(flushed) > expected / 2, `rows reached the MergeTree by flushes (${flushed})`);
});
