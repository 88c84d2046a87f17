import type { FastifyInstance } from 'fastify';
import type { SavedQueryInput } from '../../catalog/saved-query-store.ts';
import { ADMIN, READ } from '../access.ts';
import { actorOfRequest } from '../auth.ts';
import type { Services } from '../services.ts';

const SAVED_QUERY_BODY_LIMIT = 2 * 1024 * 1024;
const byId = { type: 'object', properties: { id: { type: 'string' } } } as const;

/** CreateSavedQueryRequest, the body of both create and update: name and sql required. */
const savedQueryBody = {
  type: 'object',
  required: ['name', 'sql'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 256 },
    sql: { type: 'string', minLength: 1, maxLength: 1024 * 1024 },
    description: { type: 'string', maxLength: 65536 },
    tags: { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 256 } },
  },
} as const;

/** Saved queries (operations 43-46 and their delete): anyone may read, admins may change. */
export function savedQueryRoutes(app: FastifyInstance, s: Services): void {
  app.get('/v1beta2/savedqueries', { config: READ }, async () => s.savedQueries.list());

  app.post(
    '/v1beta2/savedqueries',
    { schema: { body: savedQueryBody }, config: ADMIN, bodyLimit: SAVED_QUERY_BODY_LIMIT },
    async (request, reply) =>
      reply
        .status(201)
        .send(await s.savedQueries.create(request.body as SavedQueryInput, actorOfRequest(request))),
  );

  app.get('/v1beta2/savedqueries/:id', { schema: { params: byId }, config: READ }, async (request) =>
    s.savedQueries.get((request.params as { id: string }).id),
  );

  app.put(
    '/v1beta2/savedqueries/:id',
    { schema: { params: byId, body: savedQueryBody }, config: ADMIN, bodyLimit: SAVED_QUERY_BODY_LIMIT },
    async (request) =>
      s.savedQueries.update(
        (request.params as { id: string }).id,
        request.body as SavedQueryInput,
        actorOfRequest(request),
      ),
  );

  app.delete(
    '/v1beta2/savedqueries/:id',
    { schema: { params: byId }, config: ADMIN },
    async (request, reply) => {
      await s.savedQueries.delete((request.params as { id: string }).id);
      return reply.status(204).send();
    },
  );
}
