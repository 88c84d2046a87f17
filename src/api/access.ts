import type { FastifyInstance } from 'fastify';
import type { Role } from '../catalog/user-store.ts';

/**
 * What a route needs, declared on every route as `config: { access }` (docs/operations.md,
 * "Roles", lists them all):
 *
 * - `public`: no credentials (`/info`, the license routes of the contract).
 * - `read`: any authenticated user; the route changes nothing.
 * - `run`: any authenticated user; the handler decides the rest by role. SQL routes let a
 *   `read_only` user run SELECTs only; the cancel and delete routes of a query let a `read_only`
 *   user act on its own queries only.
 * - `admin`: admins only; a `read_only` user gets 403 before the handler runs.
 */
export type Access = 'public' | 'read' | 'run' | 'admin';

export const ACCESS_LEVELS: readonly Access[] = ['public', 'read', 'run', 'admin'];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What the route needs (see `Access`); a route without it stops start-up. */
    access?: Access;
  }
}

/** One row of the route table: a method and path (with the API prefix) and what it needs. */
export interface RouteAccess {
  method: string;
  url: string;
  access: Access;
}

/** Whether a role passes the hook for a route's access (`run` routes check more in the handler). */
export function roleMayCall(role: Role, access: Access): boolean {
  return access !== 'admin' || role === 'admin';
}

const tables = new WeakMap<FastifyInstance, RouteAccess[]>();

/** The route table of a server built by buildServer: every route and what it needs. */
export function routeAccessTable(app: FastifyInstance): readonly RouteAccess[] {
  const table = tables.get(app);
  if (!table) throw new Error('this server does not collect route access (see collectRouteAccess)');
  return table;
}

/**
 * Collect every route's access declaration as routes are added; a route without one (or with an
 * unknown one) throws, so the server does not start with an unguarded route. Install before any
 * route is registered. HEAD routes Fastify adds for GET routes carry the GET route's config.
 */
export function collectRouteAccess(app: FastifyInstance): RouteAccess[] {
  const table: RouteAccess[] = [];
  tables.set(app, table);
  app.addHook('onRoute', (route) => {
    const access = route.config?.access;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!access || !ACCESS_LEVELS.includes(access)) {
      throw new Error(
        `route ${methods.join(',')} ${route.url} declares no access (config.access: ${ACCESS_LEVELS.join(' | ')}); see src/api/access.ts`,
      );
    }
    for (const method of methods) table.push({ method: String(method), url: route.url, access });
  });
  return table;
}

/** The `config` of a route, by what it needs: `{ schema, config: ADMIN }`. */
export const PUBLIC = { access: 'public' } as const;
export const READ = { access: 'read' } as const;
export const RUN = { access: 'run' } as const;
export const ADMIN = { access: 'admin' } as const;
