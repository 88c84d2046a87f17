import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

/** DER prefixes that turn a raw 32-byte Ed25519 key into SPKI (public) or PKCS#8 (private). */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]*?-----END \1-----/g;

export class LicenseKeyError extends Error {}

function rawKey(token: string, what: string): Buffer {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(token))
    throw new LicenseKeyError(`${what} "${token.slice(0, 12)}…" is not base64`);
  const raw = Buffer.from(token.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (raw.length !== 32) {
    throw new LicenseKeyError(`${what} must be 32 bytes (base64 of a raw Ed25519 key), got ${raw.length}`);
  }
  return raw;
}

function ensureEd25519(key: KeyObject, what: string): KeyObject {
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new LicenseKeyError(`${what} is a ${key.asymmetricKeyType} key; license keys are Ed25519`);
  }
  return key;
}

/**
 * The Ed25519 public keys license signatures are checked against (TRIBUTARY_LICENSE_PUBLIC_KEYS):
 * PEM blocks (`-----BEGIN PUBLIC KEY-----`) and/or base64 of raw 32-byte keys, separated by
 * commas or white space. Throws LicenseKeyError on anything else.
 */
export function parsePublicKeys(text: string): KeyObject[] {
  const keys: KeyObject[] = [];
  for (const pem of text.match(PEM_BLOCK) ?? []) {
    try {
      keys.push(ensureEd25519(createPublicKey(pem), 'a PEM public key'));
    } catch (e) {
      if (e instanceof LicenseKeyError) throw e;
      throw new LicenseKeyError(`a PEM public key cannot be read (${(e as Error).message})`);
    }
  }
  for (const token of text
    .replace(PEM_BLOCK, ' ')
    .split(/[\s,]+/)
    .filter(Boolean)) {
    const der = Buffer.concat([SPKI_PREFIX, rawKey(token, 'a public key')]);
    keys.push(createPublicKey({ key: der, format: 'der', type: 'spki' }));
  }
  return keys;
}

/** The private key that signs licenses: a PEM block (PKCS#8) or base64 of the raw 32-byte seed. */
export function parsePrivateKey(text: string): KeyObject {
  const pem = text.match(PEM_BLOCK)?.[0];
  if (pem) {
    try {
      return ensureEd25519(createPrivateKey(pem), 'the private key');
    } catch (e) {
      if (e instanceof LicenseKeyError) throw e;
      throw new LicenseKeyError(`the PEM private key cannot be read (${(e as Error).message})`);
    }
  }
  const der = Buffer.concat([PKCS8_PREFIX, rawKey(text.trim(), 'the private key')]);
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
}

/** Base64 of a key's raw 32 bytes (the form TRIBUTARY_LICENSE_PUBLIC_KEYS accepts). */
export function rawBase64(key: KeyObject): string {
  const der =
    key.type === 'public'
      ? key.export({ format: 'der', type: 'spki' })
      : key.export({ format: 'der', type: 'pkcs8' });
  return der.subarray(der.length - 32).toString('base64');
}
