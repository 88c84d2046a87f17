/**
 * `tributary serve` keeps its data directory private: every directory 0700, every file 0600
 * (write-ahead log, engine data and catalog, the initial password file), also what an earlier
 * version left more open; the first password goes to a file only when it was generated.
 */
import assert from 'node:assert/strict';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { freePort, type Run, serve, waitForInfo } from '../helpers/serve-process.ts';

/** Every entry under `dir` whose mode is not 0700 (directories) or 0600 (files). */
async function openEntries(dir: string, root = dir): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const st = await lstat(path);
    if (st.isSymbolicLink()) continue; // links have no mode of their own
    const mode = st.mode & 0o777;
    const want = st.isDirectory() ? 0o700 : 0o600;
    if (mode !== want) out.push(`${relative(root, path)} ${mode.toString(8)}`);
    if (st.isDirectory()) out.push(...(await openEntries(path, root)));
  }
  return out;
}

async function countFiles(dir: string): Promise<number> {
  let n = 0;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    n += e.isDirectory() ? await countFiles(join(dir, e.name)) : 1;
  }
  return n;
}

async function post(base: string, path: string, auth: Record<string, string>, body: unknown) {
  const r = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await r.arrayBuffer();
  return r.status;
}

async function stop(run: Run): Promise<void> {
  run.kill('SIGTERM');
  assert.equal((await run.exit).code, 0, run.output());
}

test('serve: a generated first password goes to a 0600 file; everything under the data directory is 0700/0600', async () => {
  const data = await mkdtemp(join(tmpdir(), 'tributary-files-'));
  try {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}/default/api`;
    const run = serve(['--port', String(port)], { TRIBUTARY_DATA: data, TRIBUTARY_LOG_LEVEL: 'warn' });
    await waitForInfo(`${base}/info`, run);
    const file = join(data, 'initial-admin-password');
    const password = (await readFile(file, 'utf8')).trim();
    assert.match(run.output(), /store it elsewhere, then delete that file/);
    const auth = { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}` };
    assert.equal(await post(base, '/v1beta2/queries', auth, { sql: 'CREATE STREAM files_s (v int32)' }), 204);
    assert.equal(
      await post(base, '/v1beta2/streams/files_s/ingest', auth, { columns: ['v'], data: [[1], [2]] }),
      200,
    );
    // A clean stop flushes the stream's buffer into the engine's table: its parts exist now.
    await stop(run);
    assert.ok((await countFiles(join(data, 'streams'))) > 0, 'the write-ahead log is there');
    assert.ok((await countFiles(join(data, 'engine'))) > 10, 'the engine wrote its data');
    assert.equal((await lstat(data)).mode & 0o777, 0o700);
    assert.deepEqual(await openEntries(data), []);

    // Next start: the password file is still there, so the log reminds to delete it.
    const again = serve(['--port', String(port)], { TRIBUTARY_DATA: data, TRIBUTARY_LOG_LEVEL: 'warn' });
    await waitForInfo(`${base}/info`, again);
    assert.equal(
      await post(base, '/v1beta2/exec', auth, {
        sql: 'SELECT count() FROM table(files_s)',
        type: 'historical',
      }),
      200,
    );
    await stop(again);
    assert.match(again.output(), /delete .*initial-admin-password/);
    assert.deepEqual(await openEntries(data), []);
  } finally {
    await rm(data, { recursive: true, force: true });
  }
});

test('serve: a configured first password is written nowhere; an open data directory is made private', async () => {
  const data = await mkdtemp(join(tmpdir(), 'tributary-files-'));
  try {
    // As an earlier version (or a careless copy) left it: readable by everyone.
    await chmod(data, 0o755);
    await mkdir(join(data, 'old'), { mode: 0o755 });
    await chmod(join(data, 'old'), 0o755);
    await writeFile(join(data, 'old', 'left-over'), 'x', { mode: 0o644 });
    await chmod(join(data, 'old', 'left-over'), 0o644);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}/default/api`;
    const secret = 'configured-password-1';
    const run = serve(['--port', String(port)], {
      TRIBUTARY_DATA: data,
      TRIBUTARY_LOG_LEVEL: 'warn',
      TRIBUTARY_ADMIN_PASSWORD: secret,
    });
    await waitForInfo(`${base}/info`, run);
    const users = await fetch(`${base}/v1beta2/users`, {
      headers: { authorization: `Basic ${Buffer.from(`admin:${secret}`).toString('base64')}` },
    });
    assert.equal(users.status, 200);
    await stop(run);
    const names = await readdir(data);
    assert.ok(!names.includes('initial-admin-password'), `no password file: ${names.join(', ')}`);
    assert.doesNotMatch(run.output(), new RegExp(secret));
    assert.equal((await lstat(data)).mode & 0o777, 0o700);
    assert.deepEqual(await openEntries(data), []);
  } finally {
    await rm(data, { recursive: true, force: true });
  }
});
