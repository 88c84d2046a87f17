import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SYSTEM_ACTOR } from './audit.ts';
import type { UserStore } from './user-store.ts';

export const INITIAL_ADMIN = 'admin';
export const INITIAL_PASSWORD_FILE = 'initial-admin-password';

export interface InitialAdmin {
  username: string;
  password: string;
  /** True when the password was generated (and so must be shown to the operator once). */
  generated: boolean;
  /** Where the generated password was written (only when generated). */
  file?: string;
}

/**
 * On a first start with no users, create the `admin` user. Its password comes from
 * TRIBUTARY_ADMIN_PASSWORD, else is generated and written to `<data>/initial-admin-password`
 * (mode 0600, a new file) for the operator to read once and delete. A configured password is
 * never written anywhere. Answers undefined when users already exist.
 */
export async function ensureInitialAdmin(
  users: UserStore,
  dataDir: string,
  configured: string | undefined,
): Promise<InitialAdmin | undefined> {
  if (users.count() > 0) return undefined;
  if (configured !== undefined) {
    await users.create(INITIAL_ADMIN, configured, 'admin', SYSTEM_ACTOR);
    return { username: INITIAL_ADMIN, password: configured, generated: false };
  }
  const password = randomBytes(18).toString('base64url');
  await users.create(INITIAL_ADMIN, password, 'admin', SYSTEM_ACTOR);
  const file = initialPasswordFile(dataDir);
  // A new file, so that the mode applies (a left-over file would keep its own).
  await rm(file, { force: true });
  await writeFile(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  return { username: INITIAL_ADMIN, password, generated: true, file };
}

export function initialPasswordFile(dataDir: string): string {
  return join(dataDir, INITIAL_PASSWORD_FILE);
}
