import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Actor, actorOf } from '../catalog/audit.ts';
import type { User, UserStore } from '../catalog/user-store.ts';
import { err } from '../errors/tributary-error.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route needs no credentials (`/info`, license routes). */
    public?: boolean;
    /** A read_only user may call this mutating-method route (the handler checks the rest). */
    readOnlyAllowed?: boolean;
  }
  interface FastifyRequest {
    /** The authenticated user; set on every non-public route. */
    user: User;
  }
}

const CACHE_TTL_MS = 5 * 60 * 1000;
const CACHE_MAX = 10_000;

/**
 * Remembers credentials that passed verification, keyed by a hash of the header value, so that a
 * stream of ingest requests does not pay for scrypt on every request. Any change to users clears it.
 */
class CredentialCache {
  private readonly entries = new Map<string, { username: string; until: number }>();

  get(header: string): string | undefined {
    const key = this.key(header);
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until < Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.username;
  }

  set(header: string, username: string): void {
    if (this.entries.size >= CACHE_MAX) this.entries.clear();
    this.entries.set(this.key(header), { username, until: Date.now() + CACHE_TTL_MS });
  }

  clear(): void {
    this.entries.clear();
  }

  private key(header: string): string {
    return createHash('sha256').update(header).digest('base64');
  }
}

function parseBasic(value: string): { username: string; password: string } | undefined {
  let decoded: string;
  try {
    decoded = Buffer.from(value, 'base64').toString('utf8');
  } catch {
    return undefined;
  }
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The credentials a request carries: Basic, `Authorization: ApiKey`, or `X-Api-Key`. */
function credentialsOf(request: FastifyRequest): { kind: 'basic' | 'apikey'; value: string } | undefined {
  const auth = request.headers.authorization;
  if (auth) {
    const [scheme, ...rest] = auth.trim().split(/\s+/);
    const value = rest.join(' ');
    if (scheme?.toLowerCase() === 'basic') return { kind: 'basic', value };
    if (scheme?.toLowerCase() === 'apikey') return { kind: 'apikey', value };
  }
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey) return { kind: 'apikey', value: apiKey };
  return undefined;
}

export interface Authenticator {
  /** Forget cached credentials (call after any user or key change). */
  invalidate(): void;
}

/**
 * HTTP Basic against Tributary's users, or an API key. Unauthenticated requests get 401 with a
 * `WWW-Authenticate` header; read_only users get 403 on every mutating route not marked
 * `readOnlyAllowed`.
 */
export function installAuth(app: FastifyInstance, users: UserStore): Authenticator {
  const cache = new CredentialCache();
  app.decorateRequest('user', undefined as unknown as User);

  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (config?.public || !request.routeOptions.url) return;
    const creds = credentialsOf(request);
    if (!creds) throw err('AUTH_REQUIRED');
    const cacheKey = `${creds.kind} ${creds.value}`;
    let user: User | undefined;
    const cached = cache.get(cacheKey);
    if (cached) user = users.get(cached);
    if (!user) {
      if (creds.kind === 'basic') {
        const basic = parseBasic(creds.value);
        if (basic) user = await users.authenticate(basic.username, basic.password);
      } else {
        user = users.authenticateApiKey(creds.value);
      }
      if (!user) throw err('AUTH_FAILED');
      cache.set(cacheKey, user.username);
    }
    request.user = user;
    const mutating = request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'OPTIONS';
    if (mutating && user.role === 'read_only' && !config?.readOnlyAllowed) {
      throw err('FORBIDDEN_READ_ONLY', {
        user: user.username,
        action: `${request.method} ${request.routeOptions.url}`,
      });
    }
  });

  return { invalidate: () => cache.clear() };
}

/** The audit actor of a request. */
export function actorOfRequest(request: FastifyRequest): Actor {
  return actorOf(request.user.username);
}

/** Throw 403 unless the request's user is an admin (for handlers of readOnlyAllowed routes). */
export function requireAdmin(request: FastifyRequest, action: string): void {
  if (request.user.role !== 'admin')
    throw err('FORBIDDEN_READ_ONLY', { user: request.user.username, action });
}
