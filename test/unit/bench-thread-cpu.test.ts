// The ingest bench's CPU split by thread (bench/thread-cpu.ts) and the load generator reporting its
// own thread (bench/socket-load.ts): the generator's CPU is counted apart from the server's.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { postRequest, runSocketLoad } from '../../bench/socket-load.ts';
import { threadCpu, threadCpuSince } from '../../bench/thread-cpu.ts';

const linux = existsSync('/proc/self/task');

test('threadCpu counts the main thread, and a busy main thread shows in the difference', {
  skip: !linux,
}, () => {
  const before = threadCpu();
  assert.ok(before && typeof before.main === 'number');
  const end = Date.now() + 150;
  let x = 0;
  while (Date.now() < end) x += Math.sqrt(x + 1);
  const spent = threadCpuSince(before, threadCpu());
  assert.ok(spent);
  assert.ok((spent.main ?? 0) > 0, `main thread CPU after a busy loop: ${JSON.stringify(spent)} (${x})`);
});

test('threadCpuSince is undefined when a sample is missing', () => {
  assert.equal(threadCpuSince(undefined, { main: 1 }), undefined);
  assert.deepEqual(threadCpuSince({ main: 1, engine: 2 }, { main: 5, engine: 2, generator: 3 }), {
    main: 4,
    engine: 0,
    generator: 3,
  });
});

test('runSocketLoad reports the CPU of the generator thread apart from the server', {
  skip: !linux,
}, async () => {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const load = await runSocketLoad(
      '127.0.0.1',
      port,
      postRequest('127.0.0.1', '/', {}, Buffer.from('x')),
      0.5,
      8,
    );
    assert.ok(load.requests > 0);
    assert.equal(load.failures, 0);
    assert.ok(load.cpu, 'CPU split present on Linux');
    assert.ok('generator' in load.cpu, `generator thread found: ${JSON.stringify(load.cpu)}`);
    assert.ok('main' in load.cpu);
  } finally {
    server.close();
  }
});
