import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
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
  file: string;
}

/**
 * On a first start with no users, create the `admin` user. Its password comes from
 * TRIBUTARY_ADMIN_PASSWORD, else is generated; either way it is written to
 * `<data>/initial-admin-password` with mode 0600. Answers undefined when users already exist.
 */
export async function ensureInitialAdmin(
  users: UserStore,
  dataDir: string,
  configured: string | undefined,
): Promise<InitialAdmin | undefined> {
  if (users.count() > 0) return undefined;
  const password = configured ?? randomBytes(18).toString('base64url');
  await users.create(INITIAL_ADMIN, password, 'admin', SYSTEM_ACTOR);
  const file = join(dataDir, INITIAL_PASSWORD_FILE);
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  return { username: INITIAL_ADMIN, password, generated: configured === undefined, file };
}
