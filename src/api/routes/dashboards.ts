import type { FastifyInstance } from 'fastify';
import type { DashboardInput } from '../../catalog/dashboard-store.ts';
import { ADMIN, READ } from '../access.ts';
import { actorOfRequest } from '../auth.ts';
import type { Services } from '../services.ts';

/** Largest body of a dashboard route (a dashboard with many panels and their SQL). */
const DASHBOARD_BODY_LIMIT = 4 * 1024 * 1024;
const byId = { type: 'object', properties: { id: { type: 'string' } } } as const;
const TEXT = { type: 'string', maxLength: 65536 } as const;
const OBJECT = { type: 'object' } as const;

const PANEL = {
  type: 'object',
  additionalProperties: false,
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 256 },
    title: TEXT,
    description: TEXT,
    viz_type: { type: 'string', maxLength: 256 },
    viz_content: { type: 'string', maxLength: 1024 * 1024 },
    position: OBJECT,
    viz_config: OBJECT,
  },
} as const;

/** CreateDashboardRequest and UpdateDashboardRequest are the same shape: name required. */
const dashboardBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 256 },
    description: TEXT,
    panels: { type: 'array', maxItems: 1000, items: PANEL },
  },
} as const;

/** Dashboards (operations 4-7 and their delete): anyone may read, admins may change. */
export function dashboardRoutes(app: FastifyInstance, s: Services): void {
  app.get('/v1beta2/dashboards', { config: READ }, async () => s.dashboards.list());

  app.post(
    '/v1beta2/dashboards',
    { schema: { body: dashboardBody }, config: ADMIN, bodyLimit: DASHBOARD_BODY_LIMIT },
    async (request, reply) =>
      reply
        .status(201)
        .send(await s.dashboards.create(request.body as DashboardInput, actorOfRequest(request))),
  );

  app.get('/v1beta2/dashboards/:id', { schema: { params: byId }, config: READ }, async (request) =>
    s.dashboards.get((request.params as { id: string }).id),
  );

  app.put(
    '/v1beta2/dashboards/:id',
    { schema: { params: byId, body: dashboardBody }, config: ADMIN, bodyLimit: DASHBOARD_BODY_LIMIT },
    async (request) =>
      s.dashboards.update(
        (request.params as { id: string }).id,
        request.body as DashboardInput,
        actorOfRequest(request),
      ),
  );

  app.delete(
    '/v1beta2/dashboards/:id',
    { schema: { params: byId }, config: ADMIN },
    async (request, reply) => {
      await s.dashboards.delete((request.params as { id: string }).id);
      return reply.status(204).send();
    },
  );
}
