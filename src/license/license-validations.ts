import type { StoredLicense } from './license-store.ts';

/** One check of a license, the contract's `Validation`: every field a string. */
export interface Validation {
  type: string;
  value: string;
  actual: string;
  status: 'ok' | 'expired' | 'exceeded' | 'unchecked';
  message: string;
}

/** The contract's `ValidationResult`. */
export interface ValidationResult {
  validated_at: string;
  validations: Validation[];
}

/** A license is validated once it has been active this long (the contract: "after ≥4h"). */
export const VALIDATION_DELAY_MS = 4 * 60 * 60 * 1000;

/**
 * Entitlement codes Tributary can check against use, and what each counts. An entitlement's
 * `metadata.limit` (a number) is the most allowed; other codes are listed as `unchecked`.
 */
export const COUNTED_ENTITLEMENTS = {
  max_streams: 'streams',
  max_views: 'views',
  max_users: 'users',
  max_dashboards: 'dashboards',
  max_saved_queries: 'saved queries',
  max_pipelines: 'pipelines',
} as const;

export type CountedEntitlement = keyof typeof COUNTED_ENTITLEMENTS;
export type Usage = Record<CountedEntitlement, number>;

function expiryCheck(l: StoredLicense, now: Date): Validation {
  if (l.expiry === undefined) {
    return {
      type: 'expiry',
      value: '',
      actual: now.toISOString(),
      status: 'ok',
      message: 'perpetual license',
    };
  }
  const expired = Date.parse(l.expiry) <= now.getTime();
  return {
    type: 'expiry',
    value: l.expiry,
    actual: now.toISOString(),
    status: expired ? 'expired' : 'ok',
    message: expired ? `the license expired at ${l.expiry}` : `valid until ${l.expiry}`,
  };
}

function entitlementCheck(code: string, limit: unknown, usage: Usage): Validation {
  const what = COUNTED_ENTITLEMENTS[code as CountedEntitlement];
  if (what === undefined || typeof limit !== 'number') {
    return {
      type: 'entitlement',
      value: code,
      actual: '',
      status: 'unchecked',
      message:
        what === undefined
          ? `${code} is not an entitlement Tributary counts`
          : `${code} has no numeric metadata.limit`,
    };
  }
  const used = usage[code as CountedEntitlement];
  const exceeded = used > limit;
  return {
    type: code,
    value: String(limit),
    actual: String(used),
    status: exceeded ? 'exceeded' : 'ok',
    message: `${used} ${what} of ${limit} allowed`,
  };
}

/**
 * Validation results of every license active for at least VALIDATION_DELAY_MS: its expiry and
 * each entitlement against current use. Licenses younger than that have no result yet.
 */
export function validateLicenses(
  licenses: readonly StoredLicense[],
  usage: Usage,
  now: Date,
): ValidationResult[] {
  return licenses
    .filter((l) => now.getTime() - Date.parse(l.activated_at) >= VALIDATION_DELAY_MS)
    .map((l) => ({
      validated_at: now.toISOString(),
      validations: [
        expiryCheck(l, now),
        ...l.entitlements.map((e) => entitlementCheck(e.code, e.metadata.limit, usage)),
      ],
    }));
}
