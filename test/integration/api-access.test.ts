/**
 * The role matrix, generated from the route table the server collects (every route declares
 * `config.access`, src/api/access.ts): every route × {no credentials, read_only and admin, each by
 * Basic and by API key} answers what docs/operations.md ("Roles") documents. A route added
 * without a declaration stops start-up; one added without a row in the docs fails here.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import Fastify from 'fastify';
import { type Access, type RouteAccess, routeAccessTable } from '../../src/api/access.ts';
import { installAuth } from '../../src/api/auth.ts';
import { API_PREFIX } from '../../src/api/server.ts';
import type { UserStore } from '../../src/catalog/user-store.ts';
import { type Credentials, type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
const who: Record<string, Credentials | null> = { none: null };
before(async () => {
  h = await startHarness();
  const reader = { user: 'matrix_reader', password: 'reader-password' };
  const made = await h.call('POST', '/v1beta2/users', {
    body: { username: reader.user, password: reader.password, role: 'read_only' },
  });
  assert.equal(made.statusCode, 201);
  const key = async (username: string) => {
    const r = await h.call('POST', '/v1beta2/auth/api_keys', { body: { name: 'matrix', username } });
    assert.equal(r.statusCode, 201);
    return (r.json() as { key: string }).key;
  };
  who['read_only Basic'] = reader;
  who['admin Basic'] = { user: 'admin', password: 'admin-password-for-tests' };
  who['read_only API key'] = { apiKey: await key(reader.user) };
  who['admin API key'] = { apiKey: await key('admin'), header: 'authorization' };
});
after(async () => {
  await h.close();
});

/** `/v1beta2/streams/:name` -> `/v1beta2/streams/{name}`, without the API prefix. */
function docPath(url: string): string {
  return url.slice(API_PREFIX.length).replace(/:(\w+)/g, '{$1}');
}

/** The rows of the route table in docs/operations.md, section "### Roles". */
async function documentedRoutes(): Promise<string[]> {
  const text = await readFile(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const start = text.indexOf('### Roles');
  assert.ok(start >= 0, 'docs/operations.md has a "### Roles" section');
  const end = text.indexOf('\n### ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  const rows: string[] = [];
  for (const m of section.matchAll(/^\| (GET|POST|PATCH|PUT|DELETE) \| `([^`]+)` \| `(\w+)` \|/gm)) {
    rows.push(`${m[1]} ${m[2]} ${m[3]}`);
  }
  return rows.sort();
}

function routes(): readonly RouteAccess[] {
  return routeAccessTable(h.trb.api);
}

test('every route is in the route table of docs/operations.md with the access it declares', async () => {
  const table = routes();
  assert.ok(table.length > 40, `the table holds every route (${table.length})`);
  const declared = table
    .filter((r) => r.method !== 'HEAD')
    .map((r) => `${r.method} ${docPath(r.url)} ${r.access}`)
    .sort();
  assert.deepEqual(await documentedRoutes(), declared);
  // Fastify's HEAD twin of a GET route needs what the GET needs.
  for (const head of table.filter((r) => r.method === 'HEAD')) {
    const get = table.find((r) => r.method === 'GET' && r.url === head.url);
    assert.equal(head.access, get?.access, `HEAD ${head.url}`);
  }
});

/** What a caller gets on a route of this access: 'pass' = the auth hook lets it through. */
function expected(access: Access, caller: string): 401 | 403 | 'pass' {
  if (access === 'public') return 'pass';
  if (caller === 'none') return 401;
  if (access === 'admin' && caller.startsWith('read_only')) return 403;
  return 'pass';
}

test('role matrix: every route as none, read_only and admin (Basic and API key)', async () => {
  const failures: string[] = [];
  for (const route of routes()) {
    // Dummy ids and bodies: the handler may answer 400 or 404, never 401/403 once past the hook.
    const url = route.url.replace(/:(\w+)/g, 'matrix_missing_$1');
    const body = ['POST', 'PATCH', 'PUT'].includes(route.method) ? {} : undefined;
    for (const [caller, creds] of Object.entries(who)) {
      const r = await h.call(route.method as 'GET', url, {
        as: creds,
        ...(body ? { body } : {}),
      });
      const want = expected(route.access, caller);
      const ok =
        want === 'pass'
          ? r.statusCode !== 401 && r.statusCode !== 403 && r.statusCode < 500
          : r.statusCode === want;
      if (!ok) failures.push(`${route.method} ${route.url} as ${caller}: ${r.statusCode}, expected ${want}`);
      if (ok && want === 401 && route.method !== 'HEAD') {
        assert.equal(r.json().code, 10001);
        assert.match(String(r.headers['www-authenticate']), /^Basic /);
      }
      if (ok && want === 403 && route.method !== 'HEAD') assert.equal(r.json().code, 10003);
    }
  }
  assert.deepEqual(failures, []);
});

test('a route that declares no access stops start-up', async () => {
  const app = Fastify();
  installAuth(app, {} as UserStore);
  // As buildServer does: routes registered inside a plugin.
  void app.register(async (api) => {
    api.get('/guarded', { config: { access: 'read' } }, async () => 'ok');
    api.get('/unguarded', async () => 'open');
  });
  await assert.rejects(async () => app.ready(), /route GET \/unguarded declares no access/);
  await app.close().catch(() => {});
});
