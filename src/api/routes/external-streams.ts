import type { FastifyInstance } from 'fastify';
import { actorOf } from '../../catalog/audit.ts';
import { err } from '../../errors/tributary-error.ts';
import type { SettingValue } from '../../external/streams/external-stream-kind.ts';
import { externalStreamKind } from '../../external/streams/external-stream-kinds.ts';
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
const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'settings'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 256 },
    description: { type: 'string', maxLength: 65536 },
    settings: { type: 'array', items: setting, maxItems: 256 },
    columns: {
      type: 'array',
      maxItems: 1000,
      items: {
        type: 'object',
        required: ['name', 'type'],
        properties: { name: { type: 'string', minLength: 1 }, type: { type: 'string', minLength: 1 } },
      },
    },
  },
} as const;
const previewBody = {
  type: 'object',
  required: ['settings'],
  properties: {
    settings: { type: 'array', items: setting, maxItems: 256 },
    count: { type: 'integer', minimum: 1 },
    offset: { type: 'string', enum: ['earliest', 'latest'] },
    timeout: { type: 'integer', minimum: 1 },
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
  // Preview reads; the kinds built so far are write-only, so it answers their 400 once the settings check.
  app.post(
    '/v1beta2/external_streams/preview',
    { schema: { querystring: dbQuery, body: previewBody }, config: ADMIN },
    async (request) => {
      const b = request.body as { settings: { key: string; value?: string }[] };
      const settings = Object.fromEntries(b.settings.map((x) => [x.key, x.value ?? '']));
      const kind = externalStreamKind(settings.type);
      if (!kind.readable)
        throw err('EXTERNAL_STREAM_WRITE_ONLY', {
          name: '(preview)',
          type: kind.type,
          detail: 'there is nothing to preview',
        });
      throw err('NOT_IMPLEMENTED', { detail: `preview of ${kind.type} external streams` });
    },
  );
}
