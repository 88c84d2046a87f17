import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort, serve, waitForInfo } from '../helpers/serve-process.ts';

test('tributary serve: a bad setting stops start-up naming the variable (exit 2)', async () => {
  const cases: Array<[string[], Record<string, string>, string]> = [
    [[], { TRIBUTARY_PORT: 'eighty' }, 'TRIBUTARY_PORT'],
    [['--log-level', 'chatty'], {}, 'TRIBUTARY_LOG_LEVEL'],
    [['--no-such-option=1'], {}, 'no-such-option'],
  ];
  for (const [args, env, name] of cases) {
    const run = serve(args, env);
    const { code } = await run.exit;
    assert.equal(code, 2, run.output());
    assert.match(run.output(), new RegExp(name));
  }
});

test('tributary serve: starts on the configured port and data directory, first admin, clean SIGTERM', async () => {
  const data = await mkdtemp(join(tmpdir(), 'tributary-cli-'));
  try {
    const port = await freePort();
    const run = serve(['--port', String(port)], { TRIBUTARY_DATA: data, TRIBUTARY_LOG_LEVEL: 'warn' });
    const base = `http://127.0.0.1:${port}/default/api`;
    const info = await waitForInfo(`${base}/info`, run);
    assert.equal(info.status, 200);
    // The generated password is printed once and written to the data directory with mode 0600.
    const password = (await readFile(join(data, 'initial-admin-password'), 'utf8')).trim();
    assert.equal((await stat(join(data, 'initial-admin-password'))).mode & 0o777, 0o600);
    assert.ok(run.output().includes(password), 'the generated password is shown once');
    const auth = { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}` };
    const created = await fetch(`${base}/v1beta2/queries`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'CREATE STREAM cli_s (v int32)' }),
    });
    assert.equal(created.status, 204);
    const ingested = await fetch(`${base}/v1beta2/streams/cli_s/ingest`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ columns: ['v'], data: [[1], [2], [3]] }),
    });
    assert.equal(ingested.status, 200);
    run.kill('SIGTERM');
    const { code } = await run.exit;
    assert.equal(code, 0, run.output());

    // The rows acknowledged before the signal are there after a restart.
    const again = serve(['--port', String(port)], { TRIBUTARY_DATA: data, TRIBUTARY_LOG_LEVEL: 'warn' });
    await waitForInfo(`${base}/info`, again);
    const r = await fetch(`${base}/v1beta2/exec`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'SELECT sum(v) FROM table(cli_s)', type: 'historical' }),
    });
    assert.deepEqual((await r.json()) as unknown, {
      columns: [{ name: 'sum(v)', type: 'int64' }],
      data: [[6]],
    });
    again.kill('SIGINT');
    assert.equal((await again.exit).code, 0, again.output());
  } finally {
    await rm(data, { recursive: true, force: true });
  }
});
