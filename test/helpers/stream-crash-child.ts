// Child process of the crash test (test/integration/streams-restart.test.ts): opens Tributary on the
// data directory given, ingests the rows asked for through the in-process ingest API, reports the
// acknowledged sequence ranges on stdout and then waits to be killed (SIGKILL, no shutdown).
import { Tributary } from '../../src/cli/tributary.ts';
import { DEFAULTS } from '../../src/config/config.ts';
import { silentLogger } from '../../src/log/logger.ts';
import { ADMIN_PASSWORD } from './harness.ts';

const [dataDir, stream, requestsArg, rowsArg] = process.argv.slice(2);
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
const results = await Promise.all(
  Array.from({ length: requests }, (_, r) =>
    trb.services.streams.ingest(
      'default',
      stream as string,
      {
        columns: ['v'],
        rows: Array.from({ length: perRequest }, (_, i) => [1000 + r * perRequest + i]),
      },
      { idempotencyId: `child-${r}` },
    ),
  ),
);
process.stdout.write(`${JSON.stringify(results)}\n`);
setInterval(() => {}, 1000);
