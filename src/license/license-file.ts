import {
  createCipheriv,
  createDecipheriv,
  createHash,
  type KeyObject,
  randomBytes,
  sign,
  verify,
} from 'node:crypto';
import { err } from '../errors/tributary-error.ts';

/** An entitlement of a license, the contract's `license.Entitlement`. */
export interface Entitlement {
  code: string;
  created: string;
  updated: string;
  metadata: Record<string, unknown>;
}

/** What a license says: the signed part of a license file. */
export interface LicenseTerms {
  /** ISO 8601 time of issue. */
  issued: string;
  /** ISO 8601 time it stops being valid; absent for a perpetual license. */
  expiry?: string;
  is_trial: boolean;
  entitlements: Entitlement[];
  /** Who issued it (the `tributary license issue --issuer`). */
  issuer?: string;
}

/**
 * The license file format, version 1 (docs/operations.md, "Licenses"):
 *
 *   file      = "trblic1." base64( iv[12] | ciphertext | tag[16] )
 *   key       = SHA-256( UTF-8 of the `key` string sent with the upload )      (AES-256)
 *   plaintext = JSON { "terms": base64(terms JSON bytes), "signature": base64(Ed25519 signature
 *               of those same bytes) }, encrypted with AES-256-GCM, additional data "trblic1"
 *
 * The signature covers the exact bytes of the terms, so nothing is re-serialised before checking.
 */
const PREFIX = 'trblic1.';
const AAD = Buffer.from('trblic1');
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Largest license file accepted (a license is a few hundred bytes). */
export const MAX_LICENSE_FILE_BYTES = 64 * 1024;

const aesKey = (key: string) => createHash('sha256').update(key, 'utf8').digest();

/** Sign the terms with the issuer's private key and encrypt them with `key`. */
export function mintLicenseFile(terms: LicenseTerms, privateKey: KeyObject, key: string): string {
  const bytes = Buffer.from(JSON.stringify(terms), 'utf8');
  const signature = sign(null, bytes, privateKey);
  const plaintext = Buffer.from(
    JSON.stringify({ terms: bytes.toString('base64'), signature: signature.toString('base64') }),
  );
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', aesKey(key), iv);
  cipher.setAAD(AAD);
  const body = Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return `${PREFIX}${body.toString('base64')}\n`;
}

function decrypt(file: Buffer, key: string): Buffer {
  const text = file.toString('utf8').trim();
  if (!text.startsWith(PREFIX)) {
    throw err('LICENSE_UNREADABLE', { detail: `the file does not start with "${PREFIX}"` });
  }
  // A form body decoded without percent-encoding turns '+' into ' ': take it back.
  const b64 = text.slice(PREFIX.length).replace(/ /g, '+');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64))
    throw err('LICENSE_UNREADABLE', { detail: 'the file is not base64' });
  const body = Buffer.from(b64, 'base64');
  if (body.length <= IV_BYTES + TAG_BYTES)
    throw err('LICENSE_UNREADABLE', { detail: 'the file is too short' });
  const decipher = createDecipheriv('aes-256-gcm', aesKey(key), body.subarray(0, IV_BYTES));
  decipher.setAAD(AAD);
  decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
  try {
    return Buffer.concat([
      decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)),
      decipher.final(),
    ]);
  } catch {
    throw err('LICENSE_UNREADABLE', { detail: 'wrong key, or the file was changed' });
  }
}

function isEntitlement(e: unknown): e is Entitlement {
  const x = e as Entitlement;
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof x.code === 'string' &&
    typeof x.created === 'string' &&
    typeof x.updated === 'string' &&
    typeof x.metadata === 'object' &&
    x.metadata !== null &&
    !Array.isArray(x.metadata)
  );
}

function checkTerms(value: unknown): LicenseTerms {
  const t = value as LicenseTerms;
  const bad = (detail: string) => err('LICENSE_MALFORMED', { detail });
  if (typeof t !== 'object' || t === null) throw bad('the terms are not an object');
  if (typeof t.issued !== 'string' || Number.isNaN(Date.parse(t.issued))) throw bad('issued is not a date');
  if (t.expiry !== undefined && (typeof t.expiry !== 'string' || Number.isNaN(Date.parse(t.expiry)))) {
    throw bad('expiry is not a date');
  }
  if (typeof t.is_trial !== 'boolean') throw bad('is_trial is not a boolean');
  if (!Array.isArray(t.entitlements) || !t.entitlements.every(isEntitlement)) {
    throw bad('entitlements is not a list of {code, created, updated, metadata}');
  }
  return t;
}

/**
 * Decrypt a license file with `key` and check its signature against the configured public keys.
 * Throws LICENSE_UNREADABLE (wrong key, changed file), LICENSE_SIGNATURE_INVALID (signed by a key
 * that is not configured, or terms changed before encryption) or LICENSE_MALFORMED.
 */
export function openLicenseFile(file: Buffer, key: string, publicKeys: readonly KeyObject[]): LicenseTerms {
  if (publicKeys.length === 0) throw err('LICENSE_NO_PUBLIC_KEYS');
  const plaintext = decrypt(file, key);
  let envelope: { terms?: unknown; signature?: unknown };
  try {
    envelope = JSON.parse(plaintext.toString('utf8')) as typeof envelope;
  } catch {
    throw err('LICENSE_MALFORMED', { detail: 'the decrypted content is not JSON' });
  }
  if (typeof envelope.terms !== 'string' || typeof envelope.signature !== 'string') {
    throw err('LICENSE_MALFORMED', { detail: 'terms or signature is missing' });
  }
  const bytes = Buffer.from(envelope.terms, 'base64');
  const signature = Buffer.from(envelope.signature, 'base64');
  if (!publicKeys.some((k) => verify(null, bytes, k, signature))) throw err('LICENSE_SIGNATURE_INVALID');
  try {
    return checkTerms(JSON.parse(bytes.toString('utf8')));
  } catch (e) {
    if (e instanceof SyntaxError) throw err('LICENSE_MALFORMED', { detail: 'the terms are not JSON' });
    throw e;
  }
}
