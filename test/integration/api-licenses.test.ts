/**
 * Licenses over the API: files minted by `tributary license issue` (the real CLI), uploaded as
 * multipart and as urlencoded forms; tampered, wrong-key, foreign-signed and expired files
 * refused with their codes; the trial; validations only once a license has been active 4 hours
 * (a fake clock); and without a license, everything as before.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { mintLicenseFile } from '../../src/license/license-file.ts';
import { rawBase64 } from '../../src/license/license-keys.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

const run = promisify(execFile);
const HOUR = 60 * 60 * 1000;
let h: Harness;
let dir: string;
// The fake clock starts at the real time: the CLI child process mints with the real clock.
let now = new Date();
const issuer = generateKeyPairSync('ed25519');
const stranger = generateKeyPairSync('ed25519');

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tributary-license-'));
  await writeFile(join(dir, 'issuer.key'), issuer.privateKey.export({ format: 'pem', type: 'pkcs8' }));
  h = await startHarness({
    config: { licensePublicKeys: `${rawBase64(stranger.publicKey)},${rawBase64(issuer.publicKey)}` },
    tuning: { clock: () => now },
  });
});
after(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

/** `tributary license issue` as an operator runs it; answers the file's content. */
async function issue(key: string, ...options: string[]): Promise<Buffer> {
  const out = join(dir, `${Math.random().toString(36).slice(2)}.lic`);
  await run(process.execPath, [
    'bin/tributary.mjs',
    'license',
    'issue',
    '--private-key',
    join(dir, 'issuer.key'),
    '--key',
    key,
    '--out',
    out,
    ...options,
  ]);
  return readFile(out);
}

function multipart(fields: Record<string, Buffer | string>, boundary = '----trbBoundary7MA4YWxkTrZu0gW') {
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    const file = name === 'file' ? '; filename="tributary.lic"' : '';
    const type = name === 'file' ? 'Content-Type: application/octet-stream\r\n' : '';
    chunks.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"${file}\r\n${type}\r\n`),
    );
    chunks.push(Buffer.isBuffer(value) ? value : Buffer.from(value));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    body: Buffer.concat(chunks),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

function urlencoded(fields: Record<string, Buffer | string>) {
  const body = new URLSearchParams(
    Object.entries(fields).map(([k, v]): [string, string] => [k, v.toString()]),
  ).toString();
  return { body, headers: { 'content-type': 'application/x-www-form-urlencoded' } };
}

const upload = (form: { body: Buffer | string; headers: Record<string, string> }) =>
  h.call('POST', '/v1beta2/licenses', { as: null, ...form });

test('without a license: the open-source entry, no validations, and the API works as before', async () => {
  const r = await h.call('GET', '/v1beta2/licenses', { as: null });
  assert.equal(r.statusCode, 201);
  assert.deepEqual(
    r.json().map((l: { entitlements: { code: string }[] }) => l.entitlements.map((e) => e.code)),
    [['open_source']],
  );
  assert.deepEqual((await h.call('GET', '/v1beta2/licenses/validations', { as: null })).json(), []);
  const s = await h.call('POST', '/v1beta2/streams', {
    body: { name: 'lic_s', columns: [{ name: 'a', type: 'int' }] },
  });
  assert.equal(s.statusCode, 201, s.body);
});

test('refused uploads: tampered, wrong key, foreign signer, expired, missing fields, other types', async () => {
  const good = await issue('k-right', '--days', '30');
  // Tampered: one character of the ciphertext changed.
  const text = good.toString().trim();
  const at = text.length - 10;
  const tampered = `${text.slice(0, at)}${text[at] === 'A' ? 'B' : 'A'}${text.slice(at + 1)}`;
  const cases: Array<[string, ReturnType<typeof multipart>, number, number]> = [
    ['tampered', multipart({ key: 'k-right', file: tampered }), 400, 10701],
    ['wrong key', multipart({ key: 'k-wrong', file: good }), 400, 10701],
    ['not a license', multipart({ key: 'k-right', file: 'hello' }), 400, 10701],
    [
      'signed by a key not configured',
      multipart({
        key: 'k',
        file: mintLicenseFile(
          { issued: now.toISOString(), is_trial: false, entitlements: [] },
          generateKeyPairSync('ed25519').privateKey,
          'k',
        ),
      }),
      400,
      10702,
    ],
    [
      'expired',
      multipart({
        key: 'k',
        file: mintLicenseFile(
          {
            issued: new Date(now.getTime() - 60 * 24 * HOUR).toISOString(),
            expiry: new Date(now.getTime() - HOUR).toISOString(),
            is_trial: false,
            entitlements: [],
          },
          issuer.privateKey,
          'k',
        ),
      }),
      400,
      10703,
    ],
  ];
  for (const [what, form, status, code] of cases) {
    const r = await upload(form);
    assert.equal(r.statusCode, status, `${what}: ${r.body}`);
    assert.equal(r.json().code, code, what);
  }
  let r = await upload(multipart({ file: good }));
  assert.equal(r.statusCode, 400);
  assert.equal(r.json().message, 'Invalid field key: is required');
  r = await upload(urlencoded({ key: 'k-right' }));
  assert.equal(r.json().message, 'Invalid field file: is required');
  r = await upload(urlencoded({ key: 'k-right', file: good, extra: '1' }));
  assert.equal(r.json().message, 'Invalid field extra: is not a known field');
  r = await upload({
    body: '--x\r\nContent-Disposition: form-data; name="key"\r\n\r\nk',
    headers: { 'content-type': 'multipart/form-data; boundary=x' },
  });
  assert.equal(r.statusCode, 400);
  assert.equal(r.json().code, 10101);
  r = await h.call('POST', '/v1beta2/licenses', { as: null, body: { key: 'k', file: 'f' } });
  assert.equal(r.statusCode, 415);
  r = await upload(multipart({ key: 'k', file: Buffer.alloc(200 * 1024, 65) }));
  assert.equal(r.statusCode, 413);
  // Nothing was stored.
  r = await h.call('GET', '/v1beta2/licenses', { as: null });
  assert.deepEqual(
    r.json().map((l: { entitlements: { code: string }[] }) => l.entitlements[0]?.code),
    ['open_source'],
  );
});

test('the CLI issue round trip: uploads as multipart and urlencoded, listed; validations after 4 hours', async () => {
  const multi = await issue(
    'key-one',
    '--days',
    '30',
    '--entitlement',
    'max_streams=1',
    '--entitlement',
    'support',
  );
  let r = await upload(multipart({ key: 'key-one', file: multi }));
  assert.equal(r.statusCode, 201, r.body);
  const perpetual = await issue('key two+/=', '--entitlement', 'max_users=100');
  r = await upload(urlencoded({ key: 'key two+/=', file: perpetual }));
  assert.equal(r.statusCode, 201, r.body);
  // The same license again (multipart this time) is stored once.
  r = await upload(multipart({ key: 'key two+/=', file: perpetual }));
  assert.equal(r.statusCode, 201, r.body);

  r = await h.call('GET', '/v1beta2/licenses', { as: null });
  assert.equal(r.statusCode, 201);
  const list = r.json() as Array<Record<string, unknown>>;
  assert.equal(list.length, 2);
  assert.deepEqual(
    list.map((l) => [l.is_trial, typeof l.expiry, (l.entitlements as { code: string }[]).map((e) => e.code)]),
    [
      [false, 'string', ['max_streams', 'support']],
      [false, 'undefined', ['max_users']],
    ],
  );
  assert.deepEqual((list[0]!.entitlements as { metadata: unknown }[])[0]!.metadata, { limit: 1 });

  // Not 4 hours yet: no validations.
  now = new Date(now.getTime() + 4 * HOUR - 1000);
  assert.deepEqual((await h.call('GET', '/v1beta2/licenses/validations', { as: null })).json(), []);

  now = new Date(now.getTime() + 1000);
  await h.call('POST', '/v1beta2/streams', {
    body: { name: 'lic_s2', columns: [{ name: 'a', type: 'int' }] },
  });
  r = await h.call('GET', '/v1beta2/licenses/validations', { as: null });
  assert.equal(r.statusCode, 200);
  const results = r.json() as Array<{ validated_at: string; validations: Array<Record<string, string>> }>;
  assert.equal(results.length, 2);
  assert.equal(results[0]?.validated_at, now.toISOString());
  const [first, second] = results.map((x) =>
    x.validations.map((v) => `${v.type}:${v.status}:${v.actual}/${v.value}`),
  );
  assert.equal(first?.[0]?.split(':')[1], 'ok', 'not expired');
  assert.equal(first?.[1], 'max_streams:exceeded:2/1', 'two streams exist, one is allowed');
  assert.match(String(first?.[2]), /^entitlement:unchecked:/);
  assert.equal(second?.[1], 'max_users:ok:1/100');
  for (const v of results.flatMap((x) => x.validations)) {
    for (const k of ['type', 'value', 'actual', 'status', 'message']) assert.equal(typeof v[k], 'string', k);
  }

  // 31 days on, the 30-day license shows as expired; the API still works (nothing is gated).
  now = new Date(now.getTime() + 31 * 24 * HOUR);
  r = await h.call('GET', '/v1beta2/licenses/validations', { as: null });
  assert.equal(r.json()[0].validations[0].status, 'expired');
  assert.equal(r.json()[1].validations[0].status, 'ok');
  assert.equal((await h.call('GET', '/v1beta2/streams')).statusCode, 200);
});

test('trial: one per server, 30 days; with users present userName/password create nobody', async () => {
  let r = await h.call('POST', '/v1beta2/licenses/trial', {
    as: null,
    body: { userName: 'intruder', password: 'intruder-password', userEmail: 'a@b.c', allowTrack: false },
  });
  assert.equal(r.statusCode, 201, r.body);
  r = await h.call('GET', '/v1beta2/users/intruder');
  assert.equal(r.statusCode, 404);
  const trial = (await h.call('GET', '/v1beta2/licenses', { as: null }))
    .json()
    .find((l: { is_trial: boolean }) => l.is_trial);
  assert.equal(trial.issued, now.toISOString());
  assert.equal(Date.parse(trial.expiry) - Date.parse(trial.issued), 30 * 24 * HOUR);
  assert.deepEqual(trial.entitlements, []);

  r = await h.call('POST', '/v1beta2/licenses/trial', { as: null, body: {} });
  assert.equal(r.statusCode, 409);
  assert.equal(r.json().code, 10705);
  r = await h.call('POST', '/v1beta2/licenses/trial', {
    as: null,
    body: { userName: 'x', password: 'short' },
  });
  assert.equal(r.statusCode, 400);
  assert.match(r.json().message, /^Invalid field password:/);
});

test('licenses survive a restart', async () => {
  const before = (await h.call('GET', '/v1beta2/licenses', { as: null })).json();
  h = await h.restart();
  assert.deepEqual((await h.call('GET', '/v1beta2/licenses', { as: null })).json(), before);
});
