// Sources: events/s from a JetStream source into a stream, beside the raw ingest rate of the same
// rows in the same run.
//   npm run bench -- sources [--messages 50000] [--batch 1000]
// A nats-server with JetStream is started here (Debian's /usr/sbin/nats-server), a backlog of
// `messages` JSON messages (~100 bytes) is published, then a nats_jetstream source is created on an
// in-process Tributary and timed until the stream holds them all (exactly once: each message is
// committed with its own idempotency id and acked after the commit). Beside it, in the same run:
//   - raw ingest: the same rows through StreamStore.ingest in batches of `batch` (one request per
//     batch, as a producer that batches itself);
//   - per-message ingest: the same rows one request each, `batch` in flight (what the JetStream
//     source does per fetched batch, without NATS), to separate NATS costs from ingest costs.
import { mkdtemp, rm } from 'node:fs/promises';
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
  const nats = await startNatsServer();
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
    for (const name of ['raw_ingest', 'per_message', 'from_jetstream'])
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
    for (let k = 0; k < messages; k += batch) {
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
    const nc = await connect({ servers: nats.url });
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
        properties: { url: nats.url, stream: 'BENCH', batch_size: batch },
      },
      SYSTEM_ACTOR,
    );
    while ((await count('from_jetstream')) < messages) await new Promise((r) => setTimeout(r, 20));
    const sourceSeconds = (performance.now() - t0) / 1000;
    await nc.close();

    const rate = (s: number) => Math.round(messages / s).toLocaleString('en-US');
    console.log(`sources bench: ${messages.toLocaleString('en-US')} rows of ~100 bytes, batch ${batch}`);
    console.log(`  raw ingest (StreamStore.ingest, ${batch}-row requests):      ${rate(rawSeconds)} rows/s`);
    console.log(
      `  per-message ingest (1-row requests with ids, ${batch} in flight): ${rate(perMessageSeconds)} rows/s`,
    );
    console.log(`  nats_jetstream source (backlog, exactly once):         ${rate(sourceSeconds)} events/s`);
    console.log(`  source / raw ingest: ${(rawSeconds / sourceSeconds).toFixed(2)}x`);
    console.log(`  exactly once: ${await count('from_jetstream')} rows in the stream`);
  } finally {
    await trb.close();
    await nats.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
