// Sources and sinks: events/s from a JetStream source into a stream, and from a stream through an
// http sink to a local receiver, beside the raw ingest rate of the same rows in the same run.
//   npm run bench -- sources [--messages 50000] [--batch 1000] [--sink-only]
// A nats-server with JetStream is started here (Debian's /usr/sbin/nats-server), a backlog of
// `messages` JSON messages (~100 bytes) is published, then a nats_jetstream source is created on an
// in-process Tributary and timed until the stream holds them all (exactly once: each message is
// committed with its own idempotency id and acked after the commit). Beside it, in the same run:
//   - raw ingest: the same rows through StreamStore.ingest in batches of `batch` (one request per
//     batch, as a producer that batches itself);
//   - per-message ingest: the same rows one request each, `batch` in flight (what the JetStream
//     source does per fetched batch, without NATS), to separate NATS costs from ingest costs;
//   - http sink: an http sink (`batch_size` = `batch`) reading a stream, delivering to a node:http
//     receiver on 127.0.0.1 that counts the JSON lines it takes; the rows are ingested in batches
//     of `batch` and the clock runs from the first ingest to the last row received.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { SYSTEM_ACTOR } from '../src/catalog/audit.ts';
import { Tributary } from '../src/cli/tributary.ts';
import { DEFAULTS } from '../src/config/config.ts';
import { silentLogger } from '../src/log/logger.ts';
import { startNatsServer } from '../test/helpers/nats-server.ts';

function arg(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

const row = (k: number) => ({
  k,
  device: `device_${k % 50}`,
  temperature: 20 + (k % 100) / 10,
  note: `reading ${k}`,
});

export default async function main(args: string[]): Promise<void> {
  const messages = arg(args, 'messages', 50_000);
  const batch = arg(args, 'batch', 1000);
  const sinkOnly = args.includes('--sink-only');
  const nats = sinkOnly ? undefined : await startNatsServer();
  const dataDir = await mkdtemp(join(tmpdir(), 'tributary-bench-sources-'));
  const trb = await Tributary.open(
    { ...DEFAULTS, dataDir, port: 0, host: '127.0.0.1', adminPassword: 'bench-sources', logLevel: 'silent' },
    silentLogger(),
  );
  const { streams, sources } = trb.services;
  const columns = [
    { name: 'k', type: 'int64' },
    { name: 'device', type: 'string' },
    { name: 'temperature', type: 'float64' },
    { name: 'note', type: 'string' },
  ];
  const count = async (name: string) => {
    const r = await trb.services.engine.query(`SELECT count() FROM default.${name}`, {
      format: 'JSONCompactEachRow',
    });
    return Number(JSON.parse(r.text().trim())[0]);
  };
  try {
    for (const name of ['raw_ingest', 'per_message', 'from_jetstream', 'to_sink'])
      await streams.create({ db: 'default', name, columns }, SYSTEM_ACTOR);

    // 1. raw ingest, batches of `batch`.
    let t0 = performance.now();
    for (let k = 0; k < messages; k += batch) {
      const objects = Array.from({ length: Math.min(batch, messages - k) }, (_, i) => row(k + i));
      await streams.ingest('default', 'raw_ingest', { objects });
    }
    const rawSeconds = (performance.now() - t0) / 1000;

    // 2. per-message ingest with idempotency ids, `batch` in flight.
    t0 = performance.now();
    if (sinkOnly) t0 = Number.NaN;
    for (let k = 0; !sinkOnly && k < messages; k += batch) {
      const n = Math.min(batch, messages - k);
      await Promise.all(
        Array.from({ length: n }, (_, i) =>
          streams.ingest(
            'default',
            'per_message',
            { objects: [row(k + i)] },
            { idempotencyId: `bench:${k + i}` },
          ),
        ),
      );
    }
    const perMessageSeconds = (performance.now() - t0) / 1000;

    // 3. the JetStream source over a published backlog.
    let sourceSeconds = Number.NaN;
    if (nats) sourceSeconds = await jetStreamSource(nats.url);
    async function jetStreamSource(url: string): Promise<number> {
      const nc = await connect({ servers: url });
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'BENCH', subjects: ['bench.>'] });
      const js = jetstream(nc);
      const pending: Promise<unknown>[] = [];
      for (let k = 0; k < messages; k++) {
        pending.push(js.publish('bench.readings', JSON.stringify(row(k))));
        if (pending.length >= 1000) await Promise.all(pending.splice(0));
      }
      await Promise.all(pending);
      if (!sources) throw new Error('sources are not enabled');
      t0 = performance.now();
      await sources.create(
        {
          name: 'bench_js',
          type: 'nats_jetstream',
          stream: 'from_jetstream',
          properties: { url, stream: 'BENCH', batch_size: batch },
        },
        SYSTEM_ACTOR,
      );
      while ((await count('from_jetstream')) < messages) await new Promise((r) => setTimeout(r, 20));
      const seconds = (performance.now() - t0) / 1000;
      await nc.close();
      return seconds;
    }

    // 4. an http sink from a stream to a local receiver.
    let received = 0;
    let requests = 0;
    let done: () => void = () => undefined;
    const all = new Promise<void>((resolve) => {
      done = resolve;
    });
    const receiver = createServer((req, res) => {
      let lines = 0;
      req.on('data', (c: Buffer) => {
        for (const b of c) if (b === 10) lines++;
      });
      req.on('end', () => {
        received += lines;
        requests++;
        res.end('ok');
        if (received >= messages) done();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { sinks } = trb.services;
    if (!sinks) throw new Error('sinks are not enabled');
    await sinks.create(
      {
        name: 'bench_http',
        type: 'http',
        query: 'SELECT k, device, temperature, note FROM to_sink',
        properties: {
          url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in`,
          batch_size: batch,
        },
      },
      SYSTEM_ACTOR,
    );
    t0 = performance.now();
    for (let k = 0; k < messages; k += batch) {
      const objects = Array.from({ length: Math.min(batch, messages - k) }, (_, i) => row(k + i));
      await streams.ingest('default', 'to_sink', { objects });
    }
    const ingestedSeconds = (performance.now() - t0) / 1000;
    await all;
    const sinkSeconds = (performance.now() - t0) / 1000;
    receiver.closeAllConnections();
    receiver.close();

    const rate = (s: number) => Math.round(messages / s).toLocaleString('en-US');
    console.log(`sources bench: ${messages.toLocaleString('en-US')} rows of ~100 bytes, batch ${batch}`);
    console.log(`  raw ingest (StreamStore.ingest, ${batch}-row requests):      ${rate(rawSeconds)} rows/s`);
    if (!sinkOnly)
      console.log(
        `  per-message ingest (1-row requests with ids, ${batch} in flight): ${rate(perMessageSeconds)} rows/s`,
      );
    if (nats) {
      console.log(`  nats_jetstream source (backlog, exactly once):         ${rate(sourceSeconds)} events/s`);
      console.log(`  source / raw ingest: ${(rawSeconds / sourceSeconds).toFixed(2)}x`);
      console.log(`  exactly once: ${await count('from_jetstream')} rows in the stream`);
    }
    console.log(
      `  http sink (stream -> receiver, ${batch}-row requests):     ${rate(sinkSeconds)} events/s (ingest alone took ${ingestedSeconds.toFixed(2)} s; ${requests} requests)`,
    );
    console.log(`  sink / raw ingest: ${(rawSeconds / sinkSeconds).toFixed(2)}x; rows received ${received}`);
  } finally {
    await trb.close();
    await nats?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
