/**
 * First run, as a new user meets it (issue 14, scope 5): `--version`, `serve --help` with the
 * defaults, the log naming the address actually bound, and the mistakes an operator makes (a
 * port in use, a second server on the same data directory, a data directory that is not one)
 * each answered with one clear line and exit 1: no stack trace, nothing created first.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { access, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { serve } from '../helpers/serve-process.ts';

const BIN = new URL('../../bin/tributary.mjs', import.meta.url).pathname;
const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

function cli(...args: string[]): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** One line on stderr, naming the problem, and no stack trace. */
function assertOneClearLine(out: string, pattern: RegExp): void {
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  assert.equal(lines.length, 1, out);
  assert.match(lines[0] ?? '', /^tributary: /);
  assert.match(lines[0] ?? '', pattern);
  assert.doesNotMatch(out, /\n\s+at /);
}

test('tributary --version and serve --help (with the defaults)', () => {
  const version = cli('--version');
  assert.equal(version.code, 0);
  assert.equal(version.out.trim(), `tributary ${VERSION}`);
  const help = cli('serve', '--help');
  assert.equal(help.code, 0, help.out);
  assert.match(help.out, /--port <value>\s+TRIBUTARY_PORT\s+default: 8000/);
  assert.match(help.out, /--host <value>\s+TRIBUTARY_HOST\s+default: 0\.0\.0\.0/);
  assert.match(help.out, /--data <value>\s+TRIBUTARY_DATA\s+default: \.\/data/);
  assert.match(help.out, /TRIBUTARY_LOG_LEVEL\s+default: info/);
});

test('a port in use: one clear line, exit 1, nothing created', async () => {
  const root = await mkdtemp(join(tmpdir(), 'tributary-first-run-'));
  const holder: Server = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  try {
    const port = (holder.address() as { port: number }).port;
    const data = join(root, 'data');
    const run = serve(['--host', '127.0.0.1', '--port', String(port)], { TRIBUTARY_DATA: data });
    const { code } = await run.exit;
    assert.equal(code, 1, run.output());
    assertOneClearLine(run.output(), new RegExp(`127\\.0\\.0\\.1:${port}.*in use`));
    await assert.rejects(access(data), 'the data directory was not created');
  } finally {
    holder.close();
    await rm(root, { recursive: true, force: true });
  }
});

test('a data directory that is not a directory: one clear line, exit 1', async () => {
  const root = await mkdtemp(join(tmpdir(), 'tributary-first-run-'));
  try {
    const file = join(root, 'not-a-dir');
    await writeFile(file, 'x');
    const run = serve(['--host', '127.0.0.1', '--port', '0'], { TRIBUTARY_DATA: file });
    const { code } = await run.exit;
    assert.equal(code, 1, run.output());
    assertOneClearLine(run.output(), /data directory .*not-a-dir.*not a directory/);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('the log names the address bound; a second server on the same data directory is refused', async () => {
  const data = await mkdtemp(join(tmpdir(), 'tributary-first-run-'));
  const first = serve(['--host', '127.0.0.1', '--port', '0'], {
    TRIBUTARY_DATA: data,
    TRIBUTARY_LOG_LEVEL: 'info',
    TRIBUTARY_ADMIN_PASSWORD: 'first-run-password',
  });
  try {
    let address: string | undefined;
    for (let i = 0; i < 300 && !address; i++) {
      address = /Tributary listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(first.output())?.[1];
      if (!address) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(address, first.output());
    assert.doesNotMatch(address, /:0$/);
    const info = await fetch(`${address}/default/api/info`);
    assert.equal(info.status, 200);

    const before = (await readdir(data)).sort();
    const second = serve(['--host', '127.0.0.1', '--port', '0'], { TRIBUTARY_DATA: data });
    const { code } = await second.exit;
    assert.equal(code, 1, second.output());
    assertOneClearLine(second.output(), /data directory .* is in use by another Tributary \(process \d+\)/);
    assert.deepEqual((await readdir(data)).sort(), before, 'the second server created nothing');
    assert.equal((await fetch(`${address}/default/api/info`)).status, 200, 'the first one still serves');
  } finally {
    first.kill('SIGTERM');
    await first.exit;
    await rm(data, { recursive: true, force: true });
  }
});
