import type { FastifyInstance } from 'fastify';
import type { SinkInput } from '../../connectors/sinks/sink-service.ts';
import { err } from '../../errors/tributary-error.ts';
import { ADMIN, READ } from '../access.ts';
import { actorOfRequest } from '../auth.ts';
import type { Services } from '../services.ts';

const byId = { type: 'object', properties: { id: { type: 'string' } } } as const;
const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'query', 'type'],
  properties: {
    name: { type: 'string', maxLength: 256 },
    query: { type: 'string', maxLength: 262144 },
    type: { type: 'string', maxLength: 64 },
    properties: { type: 'object' },
    description: { type: 'string', maxLength: 65536 },
  },
} as const;
const patchBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', maxLength: 256 },
    properties: { type: 'object' },
    description: { type: 'string', maxLength: 65536 },
  },
} as const;
/** The contract marks both required; absent, they default to one day and ten minutes. */
const statsQuery = {
  type: 'object',
  properties: { error_log_time_range: { type: 'string' }, metrics_time_range: { type: 'string' } },
} as const;

/** Sinks (operations 49-55 plus delete and start): anyone may read, admins may change. */
export function sinkRoutes(app: FastifyInstance, s: Services): void {
  const sinks = () => {
    if (!s.sinks) throw err('NOT_IMPLEMENTED', { detail: 'Sinks are not enabled on this server' });
    return s.sinks;
  };
  const id = (request: { params: unknown }) => (request.params as { id: string }).id;

  app.get('/v1beta2/sinks', { config: READ }, async () => sinks().list());
  app.post('/v1beta2/sinks', { schema: { body: createBody }, config: ADMIN }, async (request, reply) =>
    reply.status(201).send(await sinks().create(request.body as SinkInput, actorOfRequest(request))),
  );
  app.get('/v1beta2/sinks/:id', { schema: { params: byId }, config: READ }, async (request) =>
    sinks().get(id(request)),
  );
  app.patch(
    '/v1beta2/sinks/:id',
    { schema: { params: byId, body: patchBody }, config: ADMIN },
    async (request) => sinks().update(id(request), request.body as SinkInput, actorOfRequest(request), false),
  );
  app.put(
    '/v1beta2/sinks/:id',
    { schema: { params: byId, body: createBody }, config: ADMIN },
    async (request) => sinks().update(id(request), request.body as SinkInput, actorOfRequest(request), true),
  );
  app.delete('/v1beta2/sinks/:id', { schema: { params: byId }, config: ADMIN }, async (request, reply) => {
    await sinks().delete(id(request));
    return reply.status(204).send();
  });
  app.post(
    '/v1beta2/sinks/:id/start',
    { schema: { params: byId }, config: ADMIN },
    async (request, reply) => {
      await sinks().start(id(request), actorOfRequest(request));
      return reply.status(204).send();
    },
  );
  app.post('/v1beta2/sinks/:id/stop', { schema: { params: byId }, config: ADMIN }, async (request, reply) => {
    await sinks().stop(id(request), actorOfRequest(request));
    return reply.status(204).send();
  });
  app.get(
    '/v1beta2/sinks/:id/logs',
    {
      schema: {
        params: byId,
        querystring: { type: 'object', properties: { lines: { type: 'string', pattern: '^[0-9]{1,4}$' } } },
      },
      config: READ,
    },
    async (request) => {
      const lines = (request.query as { lines?: string }).lines;
      return sinks().logsOf(id(request), Math.min(lines === undefined ? 100 : Number(lines), 1000));
    },
  );
  app.get(
    '/v1beta2/sinks/:id/stats',
    { schema: { params: byId, querystring: statsQuery }, config: READ },
    async (request) => {
      const q = request.query as { error_log_time_range?: string; metrics_time_range?: string };
      return sinks().statsOf(id(request), q.metrics_time_range ?? '10m', q.error_log_time_range ?? '1d');
    },
  );
}
