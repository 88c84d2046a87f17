import { generateKeyPairSync } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { type Entitlement, type LicenseTerms, mintLicenseFile } from '../license/license-file.ts';
import { parsePrivateKey, rawBase64 } from '../license/license-keys.ts';

export const LICENSE_USAGE = `Usage:
  tributary license keygen
      print a new Ed25519 key pair: the private key (keep it secret) and the public key
      (give it to servers in TRIBUTARY_LICENSE_PUBLIC_KEYS)
  tributary license issue --private-key <file> --key <encryption key> [options]
      mint a license file signed with the private key (PEM or base64 of the raw 32-byte seed)
      and encrypted with the key the upload will carry
    --expiry <ISO date>          when it ends (default: perpetual)
    --days <n>                   or: ends n days from now
    --trial                      mark it as a trial license
    --entitlement <code[=limit]> repeatable; e.g. max_streams=100 (metadata {"limit": 100})
    --issuer <name>              who issued it (default: tributary)
    --out <file>                 write the file there (default: standard output)
`;

export class LicenseCommandError extends Error {}

interface IssueOptions {
  privateKey?: string;
  key?: string;
  expiry?: string;
  days?: number;
  trial: boolean;
  entitlements: string[];
  issuer: string;
  out?: string;
}

function parseIssueArgs(argv: readonly string[]): IssueOptions {
  const o: IssueOptions = { trial: false, entitlements: [], issuer: 'tributary' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq >= 0 && arg.startsWith('--') ? arg.slice(0, eq) : arg;
    if (name === '--trial') {
      o.trial = true;
      continue;
    }
    const value = (): string => {
      const v = eq >= 0 && arg.startsWith('--') ? arg.slice(eq + 1) : argv[++i];
      if (v === undefined || v === '') throw new LicenseCommandError(`${name} needs a value`);
      return v;
    };
    switch (name) {
      case '--private-key':
        o.privateKey = value();
        break;
      case '--key':
        o.key = value();
        break;
      case '--expiry': {
        const v = value();
        if (Number.isNaN(Date.parse(v))) throw new LicenseCommandError(`--expiry "${v}" is not a date`);
        o.expiry = new Date(v).toISOString();
        break;
      }
      case '--days': {
        const v = value();
        if (!/^\d+$/.test(v) || Number(v) < 1)
          throw new LicenseCommandError(`--days must be a whole number ≥ 1`);
        o.days = Number(v);
        break;
      }
      case '--entitlement':
        o.entitlements.push(value());
        break;
      case '--issuer':
        o.issuer = value();
        break;
      case '--out':
        o.out = value();
        break;
      default:
        throw new LicenseCommandError(`unknown option ${arg}`);
    }
  }
  return o;
}

function entitlementOf(spec: string, now: string): Entitlement {
  const m = /^([A-Za-z][A-Za-z0-9_.-]*)(?:=(\d+))?$/.exec(spec);
  if (!m?.[1]) throw new LicenseCommandError(`--entitlement "${spec}" is not code or code=limit`);
  return {
    code: m[1],
    created: now,
    updated: now,
    metadata: m[2] !== undefined ? { limit: Number(m[2]) } : {},
  };
}

/** Build the terms of `tributary license issue` from its options (the time now given). */
export function termsOf(o: IssueOptions, now: Date): LicenseTerms {
  if (o.expiry !== undefined && o.days !== undefined)
    throw new LicenseCommandError('give --expiry or --days, not both');
  const issued = now.toISOString();
  const expiry =
    o.expiry ??
    (o.days !== undefined ? new Date(now.getTime() + o.days * 86_400_000).toISOString() : undefined);
  return {
    issued,
    ...(expiry !== undefined ? { expiry } : {}),
    is_trial: o.trial,
    entitlements: o.entitlements.map((e) => entitlementOf(e, issued)),
    issuer: o.issuer,
  };
}

/** `tributary license <keygen|issue> ...`; writes to `out` (standard output by default). */
export async function licenseCommand(argv: readonly string[], out: (text: string) => void): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === 'keygen') {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    out(`private key (secret): ${rawBase64(privateKey)}\npublic key:           ${rawBase64(publicKey)}\n`);
    return;
  }
  if (sub !== 'issue')
    throw new LicenseCommandError(sub ? `unknown license command "${sub}"` : 'no license command');
  const o = parseIssueArgs(rest);
  if (!o.privateKey) throw new LicenseCommandError('--private-key <file> is required');
  if (!o.key) throw new LicenseCommandError('--key <encryption key> is required');
  let keyText: string;
  try {
    keyText = await readFile(o.privateKey, 'utf8');
  } catch (e) {
    throw new LicenseCommandError(`cannot read ${o.privateKey}: ${(e as Error).message}`);
  }
  let privateKey: ReturnType<typeof parsePrivateKey>;
  try {
    privateKey = parsePrivateKey(keyText);
  } catch (e) {
    throw new LicenseCommandError(`${o.privateKey}: ${(e as Error).message}`);
  }
  const file = mintLicenseFile(termsOf(o, new Date()), privateKey, o.key);
  if (o.out) await writeFile(o.out, file, { mode: 0o600 });
  else out(file);
}
