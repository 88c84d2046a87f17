import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { err } from '../errors/tributary-error.ts';
import type { Actor } from './audit.ts';
import type { Catalog, CatalogRecord } from './catalog.ts';
import { hashPassword, verifyPassword } from './password-hash.ts';

export type Role = 'admin' | 'read_only';
export const ROLES: readonly Role[] = ['admin', 'read_only'];

interface StoredUser {
  username: string;
  role: Role;
  password_hash: string;
}

interface StoredApiKey {
  id: string;
  name: string;
  username: string;
  /** sha256 of the key; keys are random and long, so a fast hash is enough. */
  key_hash: string;
  prefix: string;
}

/** A user as the API shows it: never with its password. */
export interface User {
  username: string;
  role: Role;
}

export interface ApiKeyInfo {
  id: string;
  name: string;
  username: string;
  prefix: string;
  created_at: string;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** Users, their salted password hashes and API keys, kept in the catalog. */
export class UserStore {
  /** A hash no password matches, checked for unknown usernames (made on first need). */
  private unknownUserHash: Promise<string> | undefined;
  private changes = 0;

  /**
   * Bumped by every change to users or API keys (create, update, delete; a key created or deleted),
   * after the change is stored: whoever remembers an authentication (src/api/auth.ts) compares it.
   */
  get generation(): number {
    return this.changes;
  }

  constructor(private readonly catalog: Catalog) {}

  list(): User[] {
    return this.catalog.list<StoredUser>('user').map((r) => this.view(r));
  }

  get(username: string): User | undefined {
    const r = this.catalog.get<StoredUser>('user', username);
    return r ? this.view(r) : undefined;
  }

  count(): number {
    return this.catalog.list('user').length;
  }

  async create(username: string, password: string, role: Role, actor: Actor): Promise<User> {
    if (this.catalog.get('user', username)) throw err('USER_ALREADY_EXISTS', { name: username });
    const stored: StoredUser = { username, role, password_hash: await hashPassword(password) };
    const created = await this.catalog.create('user', username, stored, actor);
    this.changes++;
    return this.view(created);
  }

  async update(username: string, patch: { password?: string; role?: Role }, actor: Actor): Promise<User> {
    const existing = this.catalog.get<StoredUser>('user', username);
    if (!existing) throw err('USER_NOT_FOUND', { name: username });
    if (patch.role === 'read_only' && existing.value.role === 'admin' && this.adminCount() === 1) {
      throw err('LAST_ADMIN', { name: username, action: 'demoted' });
    }
    const next: StoredUser = {
      ...existing.value,
      ...(patch.role ? { role: patch.role } : {}),
      ...(patch.password !== undefined ? { password_hash: await hashPassword(patch.password) } : {}),
    };
    try {
      return this.view(await this.catalog.update('user', username, next, actor));
    } finally {
      this.changes++;
    }
  }

  async delete(username: string): Promise<void> {
    const existing = this.catalog.get<StoredUser>('user', username);
    if (!existing) throw err('USER_NOT_FOUND', { name: username });
    if (existing.value.role === 'admin' && this.adminCount() === 1) {
      throw err('LAST_ADMIN', { name: username, action: 'deleted' });
    }
    try {
      for (const k of this.catalog.list<StoredApiKey>('api_key', (r) => r.value.username === username)) {
        await this.catalog.delete('api_key', k.key);
      }
      await this.catalog.delete('user', username);
    } finally {
      this.changes++;
    }
  }

  /**
   * The user whose password matches, or undefined. An unknown username costs a check too, so
   * that the time of the answer does not tell which usernames exist.
   */
  async authenticate(username: string, password: string): Promise<User | undefined> {
    const r = this.catalog.get<StoredUser>('user', username);
    if (!r) {
      this.unknownUserHash ??= hashPassword(randomBytes(32).toString('base64'));
      await verifyPassword(password, await this.unknownUserHash);
      return undefined;
    }
    return (await verifyPassword(password, r.value.password_hash)) ? this.view(r) : undefined;
  }

  /** Create an API key for a user; the key itself is returned once and never stored. */
  async createApiKey(username: string, name: string, actor: Actor): Promise<ApiKeyInfo & { key: string }> {
    if (!this.catalog.get('user', username)) throw err('USER_NOT_FOUND', { name: username });
    const key = `trb_${randomBytes(42).toString('base64url')}`.slice(0, 60);
    const id = randomBytes(8).toString('hex');
    const stored: StoredApiKey = { id, name, username, key_hash: sha256(key), prefix: key.slice(0, 8) };
    const rec = await this.catalog.create('api_key', id, stored, actor);
    this.changes++;
    return { ...this.keyView(rec), key };
  }

  listApiKeys(username?: string): ApiKeyInfo[] {
    return this.catalog
      .list<StoredApiKey>('api_key', (r) => !username || r.value.username === username)
      .map((r) => this.keyView(r));
  }

  async deleteApiKey(id: string): Promise<boolean> {
    try {
      return await this.catalog.delete('api_key', id);
    } finally {
      this.changes++;
    }
  }

  /** The user an API key belongs to, or undefined. */
  authenticateApiKey(key: string): User | undefined {
    const hash = Buffer.from(sha256(key), 'hex');
    for (const r of this.catalog.list<StoredApiKey>('api_key')) {
      if (timingSafeEqual(Buffer.from(r.value.key_hash, 'hex'), hash)) return this.get(r.value.username);
    }
    return undefined;
  }

  private adminCount(): number {
    return this.catalog.list<StoredUser>('user', (r) => r.value.role === 'admin').length;
  }

  private view(r: CatalogRecord<StoredUser>): User {
    return { username: r.value.username, role: r.value.role };
  }

  private keyView(r: CatalogRecord<StoredApiKey>): ApiKeyInfo {
    const { id, name, username, prefix } = r.value;
    return { id, name, username, prefix, created_at: r.audit.created_at };
  }
}
