import type { FastifyInstance } from 'fastify';
import type { SourceInput } from '../../connectors/sources/source-service.ts';
import { err } from '../../errors/tributary-error.ts';
import { ADMIN, READ } from '../access.ts';
import { actorOfRequest } from '../auth.ts';
import type { Services } from '../services.ts';

const byId = { type: 'object', properties: { id: { type: 'string' } } } as const;
const sourceBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', maxLength: 256 },
    type: { type: 'string', maxLength: 64 },
    stream: { type: 'string', maxLength: 256 },
    properties: { type: 'object' },
    description: { type: 'string', maxLength: 65536 },
  },
} as const;
const createBody = { ...sourceBody, required: ['name', 'type', 'stream'] } as const;
const previewBody = {
  type: 'object',
  required: ['type'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', maxLength: 64 },
    properties: { type: 'object' },
    size: { type: 'integer', minimum: 1, maximum: 1000 },
    timeout: { type: 'string', maxLength: 64 },
  },
} as const;
/** The contract marks both required; absent, they default to one day and ten minutes. */
const statsQuery = {
  type: 'object',
  properties: { error_log_time_range: { type: 'string' }, metrics_time_range: { type: 'string' } },
} as const;

/** Sources (operations 56-62 plus delete, start, stop): anyone may read, admins may change. */
export function sourceRoutes(app: FastifyInstance, s: Services): void {
  const sources = () => {
    if (!s.sources) throw err('NOT_IMPLEMENTED', { detail: 'Sources are not enabled on this server' });
    return s.sources;
  };
  const id = (request: { params: unknown }) => (request.params as { id: string }).id;

  app.get('/v1beta2/sources', { config: READ }, async () => sources().list());
  app.post('/v1beta2/sources', { schema: { body: createBody }, config: ADMIN }, async (request, reply) =>
    reply.status(201).send(await sources().create(request.body as SourceInput, actorOfRequest(request))),
  );
  app.get('/v1beta2/sources/:id', { schema: { params: byId }, config: READ }, async (request) =>
    sources().get(id(request)),
  );
  app.patch(
    '/v1beta2/sources/:id',
    { schema: { params: byId, body: sourceBody }, config: ADMIN },
    async (request) =>
      sources().update(id(request), request.body as SourceInput, actorOfRequest(request), false),
  );
  app.put(
    '/v1beta2/sources/:id',
    { schema: { params: byId, body: sourceBody }, config: ADMIN },
    async (request) =>
      sources().update(id(request), request.body as SourceInput, actorOfRequest(request), true),
  );
  app.delete('/v1beta2/sources/:id', { schema: { params: byId }, config: ADMIN }, async (request, reply) => {
    await sources().delete(id(request));
    return reply.status(204).send();
  });
  app.post(
    '/v1beta2/sources/:id/start',
    { schema: { params: byId }, config: ADMIN },
    async (request, reply) => {
      await sources().start(id(request), actorOfRequest(request));
      return reply.status(204).send();
    },
  );
  app.post(
    '/v1beta2/sources/:id/stop',
    { schema: { params: byId }, config: ADMIN },
    async (request, reply) => {
      await sources().stop(id(request), actorOfRequest(request));
      return reply.status(204).send();
    },
  );
  app.get(
    '/v1beta2/sources/:id/stats',
    { schema: { params: byId, querystring: statsQuery }, config: READ },
    async (request) => {
      const q = request.query as { error_log_time_range?: string; metrics_time_range?: string };
      return sources().statsOf(id(request), q.metrics_time_range ?? '10m', q.error_log_time_range ?? '1d');
    },
  );
  app.post('/v1beta2/source/preview', { schema: { body: previewBody }, config: ADMIN }, async (request) =>
    sources().preview(
      request.body as {
        type?: string;
        properties?: Record<string, unknown>;
        size?: number;
        timeout?: string;
      },
    ),
  );
}
