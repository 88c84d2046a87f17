import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { UserStore } from '../../src/catalog/user-store.ts';
import { TributaryError } from '../../src/errors/tributary-error.ts';
import { type LicenseTerms, mintLicenseFile, openLicenseFile } from '../../src/license/license-file.ts';
import {
  LicenseKeyError,
  parsePrivateKey,
  parsePublicKeys,
  rawBase64,
} from '../../src/license/license-keys.ts';
import { LicenseStore } from '../../src/license/license-store.ts';
import { MemoryCatalog } from '../helpers/memory-catalog.ts';

const pair = generateKeyPairSync('ed25519');
const other = generateKeyPairSync('ed25519');
const terms: LicenseTerms = {
  issued: '2026-01-01T00:00:00.000Z',
  expiry: '2027-01-01T00:00:00.000Z',
  is_trial: false,
  entitlements: [{ code: 'max_streams', created: 'c', updated: 'u', metadata: { limit: 3 } }],
  issuer: 'acme',
};

function code(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof TributaryError) return e.code;
    throw e;
  }
  return undefined;
}

test('a minted file opens with its key and the issuer public key, to the same terms', () => {
  const file = mintLicenseFile(terms, pair.privateKey, 'the key');
  assert.match(file, /^trblic1\.[A-Za-z0-9+/]+=*\n$/);
  assert.deepEqual(openLicenseFile(Buffer.from(file), 'the key', [other.publicKey, pair.publicKey]), terms);
  // Two mints of the same terms differ (a fresh IV each time).
  assert.notEqual(mintLicenseFile(terms, pair.privateKey, 'the key'), file);
  // A form decoder that turned '+' into ' ' does not break it.
  assert.deepEqual(
    openLicenseFile(Buffer.from(file.replace(/\+/g, ' ')), 'the key', [pair.publicKey]),
    terms,
  );
});

test('wrong key, any changed byte, foreign signer, no keys: each refused with its code', () => {
  const file = mintLicenseFile(terms, pair.privateKey, 'k');
  assert.equal(
    code(() => openLicenseFile(Buffer.from(file), 'K', [pair.publicKey])),
    10701,
  );
  const body = Buffer.from(file.trim().slice('trblic1.'.length), 'base64');
  for (const at of [0, 12, body.length - 1]) {
    const changed = Buffer.from(body);
    changed[at] = (changed[at] ?? 0) ^ 1;
    const tampered = Buffer.from(`trblic1.${changed.toString('base64')}`);
    assert.equal(
      code(() => openLicenseFile(tampered, 'k', [pair.publicKey])),
      10701,
      `byte ${at}`,
    );
  }
  assert.equal(
    code(() => openLicenseFile(Buffer.from(file), 'k', [other.publicKey])),
    10702,
  );
  assert.equal(
    code(() => openLicenseFile(Buffer.from(file), 'k', [])),
    10704,
  );
  assert.equal(
    code(() => openLicenseFile(Buffer.from('trblic1.AAAA'), 'k', [pair.publicKey])),
    10701,
  );
  const bad = mintLicenseFile({ ...terms, is_trial: 'no' } as unknown as LicenseTerms, pair.privateKey, 'k');
  assert.equal(
    code(() => openLicenseFile(Buffer.from(bad), 'k', [pair.publicKey])),
    10706,
  );
});

test('keys: base64 raw and PEM, public and private; anything else refused', () => {
  const pem = pair.publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const keys = parsePublicKeys(`${pem}\n${rawBase64(other.publicKey)}, ${rawBase64(pair.publicKey)}`);
  assert.equal(keys.length, 3);
  assert.deepEqual(
    keys.map((k) => rawBase64(k)),
    [rawBase64(pair.publicKey), rawBase64(other.publicKey), rawBase64(pair.publicKey)],
  );
  const fromSeed = parsePrivateKey(rawBase64(pair.privateKey));
  const fromPem = parsePrivateKey(pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString());
  for (const k of [fromSeed, fromPem]) {
    const file = mintLicenseFile(terms, k, 'k');
    assert.deepEqual(openLicenseFile(Buffer.from(file), 'k', keys), terms);
  }
  assert.throws(() => parsePublicKeys('c2hvcnQ='), LicenseKeyError);
  assert.throws(() => parsePublicKeys('not base64!'), LicenseKeyError);
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
    format: 'pem',
    type: 'spki',
  });
  assert.throws(() => parsePublicKeys(rsa.toString()), /Ed25519/);
});

test('trial on a server with no users creates the first admin from userName/password', async () => {
  const catalog = new MemoryCatalog();
  const users = new UserStore(catalog);
  const now = new Date('2026-03-01T00:00:00Z');
  const store = new LicenseStore(catalog, users, [], () => now);
  await assert.rejects(store.startTrial({ userName: 'first' }), (e: TributaryError) => e.code === 10102);
  assert.equal(users.count(), 0, 'nothing created by a refused trial');
  const { license, admin } = await store.startTrial({ userName: 'first', password: 'first-password' });
  assert.deepEqual(admin, { username: 'first', role: 'admin' });
  assert.deepEqual(await users.authenticate('first', 'first-password'), { username: 'first', role: 'admin' });
  assert.equal(license.is_trial, true);
  assert.equal(license.expiry, '2026-03-31T00:00:00.000Z');
  assert.equal(license.created_by, 'first');
  await assert.rejects(store.startTrial({}), (e: TributaryError) => e.code === 10705);
});
