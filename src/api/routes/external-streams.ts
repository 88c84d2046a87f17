import type { FastifyInstance } from 'fastify';
import { actorOf } from '../../catalog/audit.ts';
import { err } from '../../errors/tributary-error.ts';
import type { SettingValue } from '../../external/streams/external-stream-kind.ts';
import { ADMIN, READ } from '../access.ts';
import { actorOfRequest } from '../auth.ts';
import type { Services } from '../services.ts';

const dbQuery = { type: 'object', properties: { db: { type: 'string', minLength: 1 } } } as const;
const byName = { type: 'object', properties: { name: { type: 'string' } } } as const;
const setting = {
  type: 'object',
  required: ['key'],
  properties: {
    key: { type: 'string', minLength: 1, maxLength: 256 },
    value: { type: 'string', maxLength: 65536 },
  },
} as const;
/** Declared columns of an external stream: `[{name, type}]`. */
const columnsSchema = {
  type: 'array',
  maxItems: 1000,
  items: {
    type: 'object',
    required: ['name', 'type'],
    properties: { name: { type: 'string', minLength: 1 }, type: { type: 'string', minLength: 1 } },
  },
} as const;
const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'settings'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 256 },
    description: { type: 'string', maxLength: 65536 },
    settings: { type: 'array', items: setting, maxItems: 256 },
    columns: columnsSchema,
  },
} as const;
const previewBody = {
  type: 'object',
  required: ['settings'],
  properties: {
    settings: { type: 'array', items: setting, maxItems: 256 },
    count: { type: 'integer', minimum: 1, maximum: 10000 },
    offset: { type: 'string', enum: ['earliest', 'latest'] },
    timeout: { type: 'integer', minimum: 1, maximum: 3600 },
    columns: columnsSchema,
  },
} as const;

/** External streams (operations 18-21 and the contract's create): anyone may read, admins may change. */
export function externalStreamRoutes(app: FastifyInstance, s: Services): void {
  const externals = () => {
    if (!s.externals)
      throw err('NOT_IMPLEMENTED', { detail: 'External streams are not enabled on this server' });
    return s.externals;
  };
  const dbOf = (request: { query: unknown }) => (request.query as { db?: string }).db ?? 'default';
  const nameOf = (request: { params: unknown }) => (request.params as { name: string }).name;

  app.get('/v1beta2/external_streams', { schema: { querystring: dbQuery }, config: READ }, async (request) =>
    externals()
      .list(dbOf(request))
      .map((r) => externals().resource(r)),
  );
  app.post(
    '/v1beta2/external_streams',
    { schema: { querystring: dbQuery, body: createBody }, config: ADMIN },
    async (request, reply) => {
      const b = request.body as {
        name: string;
        description?: string;
        settings: { key: string; value?: string }[];
        columns?: { name: string; type: string }[];
      };
      const db = dbOf(request);
      await externals().create(
        {
          db,
          name: b.name,
          columns: (b.columns ?? []).map((c) => ({ name: c.name, type: c.type })),
          settings: Object.fromEntries(
            b.settings.map((x) => [x.key, x.value ?? ''] as [string, SettingValue]),
          ),
          ...(b.description !== undefined ? { description: b.description } : {}),
        },
        actorOfRequest(request) ?? actorOf('system'),
      );
      return reply.status(201).send(externals().resource(externals().require(db, b.name)));
    },
  );
  app.get(
    '/v1beta2/external_streams/:name',
    { schema: { params: byName, querystring: dbQuery }, config: READ },
    async (request) => externals().resource(externals().require(dbOf(request), nameOf(request))),
  );
  app.delete(
    '/v1beta2/external_streams/:name',
    { schema: { params: byName, querystring: dbQuery }, config: ADMIN },
    async (request, reply) => {
      await externals().drop(dbOf(request), nameOf(request));
      return reply.status(204).send();
    },
  );
  app.get(
    '/v1beta2/external_streams/:name/stats',
    { schema: { params: byName, querystring: dbQuery }, config: READ },
    async (request) => externals().stats(dbOf(request), nameOf(request)),
  );
  // Preview (operation 21): count events of the described stream, read without creating it.
  app.post(
    '/v1beta2/external_streams/preview',
    { schema: { querystring: dbQuery, body: previewBody }, config: ADMIN },
    async (request, reply) => {
      const b = request.body as {
        settings: { key: string; value?: string }[];
        columns?: { name: string; type: string }[];
        count?: number;
        offset?: 'earliest' | 'latest';
        timeout?: number;
      };
      const settings = Object.fromEntries(
        b.settings.map((x) => [x.key, x.value ?? ''] as [string, SettingValue]),
      );
      const abort = new AbortController();
      reply.raw.once('close', () => abort.abort());
      return externals().preview(
        (b.columns ?? []).map((c) => ({ name: c.name, type: c.type })),
        settings,
        {
          count: b.count ?? 1,
          offset: b.offset ?? 'latest',
          timeoutMs: (b.timeout ?? 60) * 1000,
          signal: abort.signal,
        },
      );
    },
  );
}
