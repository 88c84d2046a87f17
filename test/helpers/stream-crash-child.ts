// Child process of the crash test (test/integration/streams-restart.test.ts): opens Tributary on the
// data directory given, ingests the rows asked for through the in-process ingest API, reports the
// acknowledged sequence ranges on stdout and then waits to be killed (SIGKILL, no shutdown).
import { Tributary } from '../../src/cli/tributary.ts';
import { DEFAULTS } from '../../src/config/config.ts';
import { silentLogger } from '../../src/log/logger.ts';
import { ADMIN_PASSWORD } from './harness.ts';

// `how`: `rows` (default) through StreamStore.ingest, or `body` as compact request bodies through
// StreamStore.ingestBody (as the HTTP route does; large bodies are staged, src/stream/stage-area.ts).
const [dataDir, stream, requestsArg, rowsArg, how = 'rows'] = process.argv.slice(2);
const trb = await Tributary.open(
  {
    ...DEFAULTS,
    dataDir: dataDir as string,
    port: 0,
    host: '127.0.0.1',
    adminPassword: ADMIN_PASSWORD,
    logLevel: 'silent',
  },
  silentLogger(),
);
const requests = Number(requestsArg);
const perRequest = Number(rowsArg);
const rowsOf = (r: number) => Array.from({ length: perRequest }, (_, i) => [1000 + r * perRequest + i]);
const results: unknown[] = [];
if (how === 'body') {
  // One after another: a large request is staged only when the stream's writer is idle.
  for (let r = 0; r < requests; r++) {
    const body = Buffer.from(JSON.stringify({ columns: ['v'], data: rowsOf(r) }));
    results.push(
      await trb.services.streams.ingestBody('default', stream as string, body, 'compact', 'utf-8', {
        idempotencyId: `child-${r}`,
      }),
    );
  }
} else {
  results.push(
    ...(await Promise.all(
      Array.from({ length: requests }, (_, r) =>
        trb.services.streams.ingest(
          'default',
          stream as string,
          { columns: ['v'], rows: rowsOf(r) },
          { idempotencyId: `child-${r}` },
        ),
      ),
    )),
  );
}
process.stdout.write(`${JSON.stringify(results)}\n`);
if (how === 'body') process.stdout.write(`${JSON.stringify(trb.services.streams.stageCounters())}\n`);
setInterval(() => {}, 1000);
