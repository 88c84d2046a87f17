import { createHash, type KeyObject, randomUUID } from 'node:crypto';
import { type Actor, actorOf } from '../catalog/audit.ts';
import type { Catalog } from '../catalog/catalog.ts';
import { SerialQueue } from '../catalog/serial-queue.ts';
import type { User, UserStore } from '../catalog/user-store.ts';
import { err } from '../errors/tributary-error.ts';
import { type Entitlement, type LicenseTerms, openLicenseFile } from './license-file.ts';

/** The contract's `License`. */
export interface License {
  created_by: string;
  issued: string;
  expiry?: string;
  is_trial: boolean;
  entitlements: Entitlement[];
}

/** A license as the catalog keeps it: the terms, who added it and when it became active. */
export interface StoredLicense extends License {
  id: string;
  /** ISO 8601: when it was uploaded or the trial started; validations start 4 hours later. */
  activated_at: string;
}

export const LICENSE_KIND = 'license';
export const TRIAL_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface TrialRequest {
  userName?: string;
  userEmail?: string;
  password?: string;
  allowTrack?: boolean;
}

/**
 * Uploaded and trial licenses, kept in the catalog. A license gates nothing: Tributary's open core
 * works the same with or without one; licenses are for operators who sell or share Tributary and
 * want the contract's license routes to carry their terms.
 */
export class LicenseStore {
  private readonly writes = new SerialQueue();

  constructor(
    private readonly catalog: Catalog,
    private readonly users: UserStore,
    private readonly publicKeys: readonly KeyObject[],
    private readonly clock: () => Date,
  ) {}

  list(): StoredLicense[] {
    return this.catalog.list<StoredLicense>(LICENSE_KIND).map((r) => r.value);
  }

  /**
   * Decrypt, verify and store an uploaded license file; an expired one is refused. The same
   * license uploaded again (the same signed terms) is stored once: the upload answers the first.
   */
  upload(file: Buffer, key: string, uploader: string): Promise<StoredLicense> {
    const terms: LicenseTerms = openLicenseFile(file, key, this.publicKeys);
    const now = this.clock();
    if (terms.expiry !== undefined && Date.parse(terms.expiry) <= now.getTime()) {
      throw err('LICENSE_EXPIRED', { expiry: terms.expiry });
    }
    const id = createHash('sha256').update(JSON.stringify(terms)).digest('hex').slice(0, 32);
    return this.add(
      id,
      {
        created_by: uploader,
        issued: terms.issued,
        ...(terms.expiry !== undefined ? { expiry: terms.expiry } : {}),
        is_trial: terms.is_trial,
        entitlements: terms.entitlements,
      },
      actorOf(uploader),
    );
  }

  /**
   * Start the one trial of this server (TRIAL_DAYS long). On a server with no users yet, the first
   * admin is created from `userName`/`password`; once users exist those fields are ignored (the
   * trial route needs no credentials and must not create users on a running server).
   */
  startTrial(request: TrialRequest): Promise<{ license: StoredLicense; admin?: User }> {
    return this.writes.run(async () => {
      const earlier = this.list().find((l) => l.is_trial);
      if (earlier) throw err('LICENSE_TRIAL_USED', { issued: earlier.issued });
      let admin: User | undefined;
      const creator = request.userName ?? 'anonymous';
      if (this.users.count() === 0) {
        if (request.userName === undefined || request.password === undefined) {
          throw err('INVALID_FIELD', {
            field: request.userName === undefined ? 'userName' : 'password',
            detail: 'is required to create the first admin on a server with no users',
          });
        }
        admin = await this.users.create(request.userName, request.password, 'admin', actorOf(creator));
      }
      const now = this.clock();
      const license = await this.write(
        {
          created_by: admin ? admin.username : 'anonymous',
          issued: now.toISOString(),
          expiry: new Date(now.getTime() + TRIAL_DAYS * DAY_MS).toISOString(),
          is_trial: true,
          entitlements: [],
        },
        actorOf(creator),
      );
      return { license, ...(admin ? { admin } : {}) };
    });
  }

  private add(id: string, license: License, actor: Actor): Promise<StoredLicense> {
    return this.writes.run(async () => {
      const earlier = this.catalog.get<StoredLicense>(LICENSE_KIND, id);
      return earlier ? earlier.value : this.write(license, actor, id);
    });
  }

  private async write(license: License, actor: Actor, id: string = randomUUID()): Promise<StoredLicense> {
    const stored: StoredLicense = { ...license, id, activated_at: this.clock().toISOString() };
    await this.catalog.create(LICENSE_KIND, id, stored, actor);
    return stored;
  }
}

/** The contract's License view of a stored license (without Tributary's own bookkeeping). */
export function licenseView(l: StoredLicense): License {
  return {
    created_by: l.created_by,
    issued: l.issued,
    ...(l.expiry !== undefined ? { expiry: l.expiry } : {}),
    is_trial: l.is_trial,
    entitlements: l.entitlements,
  };
}
