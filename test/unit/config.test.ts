import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { ConfigError, DEFAULTS, loadConfig } from '../../src/config/config.ts';

test('defaults: port 8000, data under ./data, log level info', () => {
  const c = loadConfig({}, []);
  assert.equal(c.port, 8000);
  assert.equal(c.dataDir, resolve('data'));
  assert.equal(c.logLevel, 'info');
  assert.equal(c.adminPassword, undefined);
  assert.deepEqual(c, DEFAULTS);
});

test('environment variables set the configuration', () => {
  const c = loadConfig({
    TRIBUTARY_PORT: '9001',
    TRIBUTARY_DATA: '/tmp/x',
    TRIBUTARY_ADMIN_PASSWORD: 'secret-password',
    TRIBUTARY_LOG_LEVEL: 'DEBUG',
  });
  assert.equal(c.port, 9001);
  assert.equal(c.dataDir, '/tmp/x');
  assert.equal(c.adminPassword, 'secret-password');
  assert.equal(c.logLevel, 'debug');
});

test('flags use the variable names or short names, and win over the environment', () => {
  assert.equal(loadConfig({ TRIBUTARY_PORT: '9001' }, ['--TRIBUTARY_PORT=9002']).port, 9002);
  assert.equal(loadConfig({}, ['--TRIBUTARY_PORT', '9003']).port, 9003);
  assert.equal(loadConfig({}, ['--port', '9004']).port, 9004);
  assert.equal(loadConfig({}, ['--data=/tmp/y']).dataDir, '/tmp/y');
  assert.equal(loadConfig({}, ['--log-level=warn']).logLevel, 'warn');
});

test('a bad value stops with a message naming the variable', () => {
  const cases: Array<[NodeJS.ProcessEnv, string[], string]> = [
    [{ TRIBUTARY_PORT: 'eighty' }, [], 'TRIBUTARY_PORT'],
    [{ TRIBUTARY_PORT: '70000' }, [], 'TRIBUTARY_PORT'],
    [{}, ['--port', '-1'], 'TRIBUTARY_PORT'],
    [{ TRIBUTARY_LOG_LEVEL: 'loud' }, [], 'TRIBUTARY_LOG_LEVEL'],
    [{ TRIBUTARY_ADMIN_PASSWORD: 'short' }, [], 'TRIBUTARY_ADMIN_PASSWORD'],
    [{ TRIBUTARY_DATA: '   ' }, [], 'TRIBUTARY_DATA'],
    [{}, ['--port'], 'TRIBUTARY_PORT'],
  ];
  for (const [env, argv, name] of cases) {
    assert.throws(
      () => loadConfig(env, argv),
      (e: unknown) => e instanceof ConfigError && e.variable === name && e.message.includes(name),
      `${JSON.stringify(env)} ${argv.join(' ')}`,
    );
  }
  assert.throws(() => loadConfig({}, ['--no-such-flag=1']), /unknown option --no-such-flag/);
});

test('TRIBUTARY_LICENSE_PUBLIC_KEYS takes Ed25519 keys and names itself when one is bad', async () => {
  const { generateKeyPairSync } = await import('node:crypto');
  const { rawBase64 } = await import('../../src/license/license-keys.ts');
  const key = rawBase64(generateKeyPairSync('ed25519').publicKey);
  assert.equal(loadConfig({ TRIBUTARY_LICENSE_PUBLIC_KEYS: key }).licensePublicKeys, key);
  assert.equal(loadConfig({}, ['--license-public-keys', key]).licensePublicKeys, key);
  assert.throws(
    () => loadConfig({ TRIBUTARY_LICENSE_PUBLIC_KEYS: 'abc' }),
    (e: unknown) => e instanceof ConfigError && e.variable === 'TRIBUTARY_LICENSE_PUBLIC_KEYS',
  );
  assert.throws(() => loadConfig({ TRIBUTARY_LICENSE_PUBLIC_KEYS: ' , ' }), /no key given/);
});

test('TRIBUTARY_TAIL_STEP_GAP_MS sets how long a busy tail coalesces commits (0: a step per commit)', () => {
  assert.equal(loadConfig({}, []).tailStepGapMs, 0);
  assert.equal(loadConfig({ TRIBUTARY_TAIL_STEP_GAP_MS: '20' }, []).tailStepGapMs, 20);
  assert.equal(loadConfig({}, ['--tail-step-gap-ms', '50']).tailStepGapMs, 50);
  assert.throws(
    () => loadConfig({ TRIBUTARY_TAIL_STEP_GAP_MS: 'soon' }, []),
    (e: unknown) => e instanceof ConfigError && e.variable === 'TRIBUTARY_TAIL_STEP_GAP_MS',
  );
});

test('TRIBUTARY_VIEW_STEP_GAP_MS sets how long views sharing a stream wait to step together (0: off)', () => {
  assert.equal(loadConfig({}, []).viewStepGapMs, 200);
  assert.equal(loadConfig({ TRIBUTARY_VIEW_STEP_GAP_MS: '0' }, []).viewStepGapMs, 0);
  assert.equal(loadConfig({}, ['--view-step-gap-ms', '50']).viewStepGapMs, 50);
  assert.throws(
    () => loadConfig({ TRIBUTARY_VIEW_STEP_GAP_MS: 'soon' }, []),
    (e: unknown) => e instanceof ConfigError && e.variable === 'TRIBUTARY_VIEW_STEP_GAP_MS',
  );
});

test('TRIBUTARY_TAIL_LATE_SHARE sets the share of commits a busy tail may hold back (0 to 0.5)', () => {
  assert.equal(loadConfig({}, []).tailLateShare, 0);
  assert.equal(loadConfig({ TRIBUTARY_TAIL_LATE_SHARE: '0.3' }, []).tailLateShare, 0.3);
  assert.equal(loadConfig({}, ['--tail-late-share', '0.25']).tailLateShare, 0.25);
  for (const bad of ['most', '0.6', '-0.1'])
    assert.throws(
      () => loadConfig({ TRIBUTARY_TAIL_LATE_SHARE: bad }, []),
      (e: unknown) => e instanceof ConfigError && e.variable === 'TRIBUTARY_TAIL_LATE_SHARE',
      bad,
    );
});
