import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  onRequestHookHandler,
} from 'fastify';

type HookDone = HookHandlerDoneFunction;

import { type Actor, actorOf } from '../catalog/audit.ts';
import type { User, UserStore } from '../catalog/user-store.ts';
import { err, isTributaryError } from '../errors/tributary-error.ts';
import { type Access, collectRouteAccess, roleMayCall } from './access.ts';
import { AuthThrottle } from './auth-throttle.ts';
import { clientAddressKey } from './client-address.ts';
import { type CachedCredential, CredentialCache } from './credential-cache.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated user; set on every non-public route. */
    user: User;
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

/**
 * What a connection last authenticated with: its credential headers as sent, and the user they
 * resolved to under `entry` (its users' generation and expiry) and the authenticator's `epoch`.
 */
interface ConnectionAuth {
  readonly authorization: string | undefined;
  readonly apiKey: string | string[] | undefined;
  readonly entry: CachedCredential;
  readonly epoch: number;
  readonly user: User;
}

export interface Authenticator {
  /** Forget cached credentials (call after any user or key change). */
  invalidate(): void;
}

/** Throw `e` with a Retry-After header when it carries `retry_after` (seconds). */
function withRetryAfter(reply: FastifyReply, e: unknown): unknown {
  if (isTributaryError(e) && e.params.retry_after !== undefined)
    void reply.header('Retry-After', String(e.params.retry_after));
  return e;
}

/**
 * HTTP Basic against Tributary's users, or an API key, checked before every route by what the
 * route declares (`config.access`, src/api/access.ts; a route without it stops start-up).
 * Unauthenticated requests get 401 with a `WWW-Authenticate` header; read_only users get 403 on
 * `admin` routes. Successful checks are cached; failed password checks are limited per client
 * address and per username (429 with Retry-After, src/api/auth-throttle.ts), and passwords are
 * checked on their own threads (src/catalog/password-pool.ts).
 */
export function installAuth(
  app: FastifyInstance,
  users: UserStore,
  throttle: AuthThrottle = new AuthThrottle(),
): Authenticator {
  const cache = new CredentialCache();
  collectRouteAccess(app);
  app.decorateRequest('user', undefined as unknown as User);

  const checkPassword = async (value: string, address: string): Promise<User | undefined> => {
    const basic = parseBasic(value);
    if (!basic) return undefined;
    const attempt = throttle.admit(clientAddressKey(address), basic.username);
    if ('retryAfterSeconds' in attempt) {
      throw err('TOO_MANY_AUTH_FAILURES', { retry_after: attempt.retryAfterSeconds });
    }
    let user: User | undefined;
    try {
      user = await users.authenticate(basic.username, basic.password);
    } catch (e) {
      attempt.abandoned();
      throw e;
    }
    if (user) attempt.succeeded();
    else attempt.failed();
    return user;
  };

  // Concurrent requests with the same credentials share one check: a client that sends a burst
  // right after the cache was cleared (any user change clears it) costs one scrypt, and its
  // in-flight checks do not count as several pending failures against its own username.
  const inFlight = new Map<string, Promise<User | undefined>>();
  const sharedCheck = (cacheKey: string, value: string, address: string): Promise<User | undefined> => {
    let pending = inFlight.get(cacheKey);
    if (!pending) {
      pending = checkPassword(value, address).finally(() => inFlight.delete(cacheKey));
      inFlight.set(cacheKey, pending);
    }
    return pending;
  };

  const admit = (request: FastifyRequest, user: User, access: Access): void => {
    request.user = user;
    if (!roleMayCall(user.role, access)) {
      throw err('FORBIDDEN_READ_ONLY', {
        user: user.username,
        action: `${request.method} ${request.routeOptions.url}`,
      });
    }
  };

  // Bumped by invalidate(): what was remembered before no longer answers.
  let epoch = 0;

  const verify = async (
    request: FastifyRequest,
    reply: FastifyReply,
    creds: { kind: 'basic' | 'apikey'; value: string },
    cacheKey: string,
  ): Promise<{ user: User; entry: CachedCredential | undefined }> => {
    // A change to users while the check runs (a password changed, a key deleted) may make its
    // answer stale: it then admits this request (as before the change) but is not remembered.
    const generation = users.generation;
    const since = epoch;
    let user: User | undefined;
    // API keys are long random strings checked with a fast hash: no limit needed.
    try {
      user =
        creds.kind === 'basic'
          ? await sharedCheck(cacheKey, creds.value, request.ip)
          : users.authenticateApiKey(creds.value);
    } catch (e) {
      throw withRetryAfter(reply, e);
    }
    if (!user) throw err('AUTH_FAILED');
    const current = users.generation === generation && epoch === since;
    return { user, entry: current ? cache.set(cacheKey, user.username, generation) : undefined };
  };

  // Per keep-alive connection, the credentials it last authenticated with: a client sends the same
  // header on every request, which is then compared as it is instead of parsed and hashed for the
  // cache. It answers only while its cache entry would (same users' generation, not expired, no
  // invalidate() since), so revoking a key or changing a password takes effect on the connection's
  // next request. Kept with the socket (a WeakMap): it goes when the connection does.
  const byConnection = new WeakMap<object, ConnectionAuth>();
  const remember = (request: FastifyRequest, entry: CachedCredential, user: User, since: number): void => {
    const socket = request.raw.socket as object | undefined;
    if (!socket) return;
    const headers = request.headers;
    byConnection.set(socket, {
      authorization: headers.authorization,
      apiKey: headers['x-api-key'],
      entry,
      epoch: since,
      user,
    });
  };
  const rememberedUser = (request: FastifyRequest): User | undefined => {
    const socket = request.raw.socket as object | undefined;
    const known = socket ? byConnection.get(socket) : undefined;
    if (known === undefined) return undefined;
    const headers = request.headers;
    if (
      known.authorization !== headers.authorization ||
      known.apiKey !== headers['x-api-key'] ||
      known.epoch !== epoch ||
      known.entry.generation !== users.generation ||
      known.entry.until < Date.now()
    )
      return undefined;
    return known.user;
  };

  // A callback hook: a request whose credentials are cached (every request of a client after its
  // first) is admitted synchronously, without a promise; only a real check goes async.
  const guard = (request: FastifyRequest, reply: FastifyReply, access: Access, done: HookDone): void => {
    let creds: { kind: 'basic' | 'apikey'; value: string } | undefined;
    let cacheKey = '';
    const since = epoch;
    try {
      const known = rememberedUser(request);
      if (known) {
        admit(request, known, access);
      } else {
        creds = credentialsOf(request);
        if (!creds) throw err('AUTH_REQUIRED');
        cacheKey = `${creds.kind} ${creds.value}`;
        const cached = cache.get(cacheKey, users.generation);
        const user = cached ? users.get(cached.username) : undefined;
        if (cached && user) {
          remember(request, cached, user, since);
          admit(request, user, access);
          creds = undefined;
        }
      }
    } catch (e) {
      done(e as Error);
      return;
    }
    // Admitted from memory: on at once, without a promise.
    if (!creds) {
      done();
      return;
    }
    verify(request, reply, creds, cacheKey).then(
      ({ user: u, entry }) => {
        try {
          if (entry) remember(request, entry, u, since);
          admit(request, u, access);
        } catch (e) {
          done(e as Error);
          return;
        }
        done();
      },
      (e: Error) => done(e),
    );
  };

  // The guard is the first onRequest hook of every route that is not public, with the route's
  // access bound when the route is added: no route lookup per request (fastify builds a new
  // `request.routeOptions` object on every read). Routes Fastify answers itself (404) have none.
  const guards = new Map<Access, onRequestHookHandler>();
  const guardOf = (access: Access): onRequestHookHandler => {
    let hook = guards.get(access);
    if (!hook) {
      hook = function authenticate(request, reply, done) {
        guard(request, reply, access, done);
      };
      guards.set(access, hook);
    }
    return hook;
  };
  app.addHook('onRoute', (route) => {
    const access = route.config?.access ?? 'admin';
    if (access === 'public') return;
    const own = route.onRequest === undefined ? [] : [route.onRequest].flat();
    route.onRequest = [guardOf(access), ...own];
  });

  return {
    invalidate: () => {
      cache.clear();
      epoch++;
    },
  };
}

/** The audit actor of a request. */
export function actorOfRequest(request: FastifyRequest): Actor {
  return actorOf(request.user.username);
}
