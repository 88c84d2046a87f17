import type { FastifyInstance } from 'fastify';
import type { PipelineInput, PipelineNodesInput } from '../../catalog/pipeline-store.ts';
import { ADMIN, READ } from '../access.ts';
import { actorOfRequest } from '../auth.ts';
import type { Services } from '../services.ts';

const PIPELINE_BODY_LIMIT = 4 * 1024 * 1024;
const byId = { type: 'object', properties: { id: { type: 'string' } } } as const;

/** PipelineNode: a state of the graph; its nodes are the console's own objects, kept as sent. */
const PIPELINE_NODES = {
  type: 'object',
  additionalProperties: false,
  properties: {
    nodes: { type: 'array', maxItems: 10000 },
    update_time: { type: 'string', maxLength: 64 },
  },
} as const;

const createPipeline = {
  type: 'object',
  required: ['name', 'description', 'nodes_history'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 256 },
    description: { type: 'string', maxLength: 65536 },
    nodes_history: { type: 'array', maxItems: 1000, items: PIPELINE_NODES },
  },
} as const;

/** Pipelines (operations 37-40 and their delete): anyone may read, admins may change. */
export function pipelineRoutes(app: FastifyInstance, s: Services): void {
  app.get('/v1beta2/pipelines', { config: READ }, async () => s.pipelines.list());

  app.post(
    '/v1beta2/pipelines',
    { schema: { body: createPipeline }, config: ADMIN, bodyLimit: PIPELINE_BODY_LIMIT },
    async (request, reply) =>
      reply
        .status(201)
        .send(await s.pipelines.create(request.body as PipelineInput, actorOfRequest(request))),
  );

  app.get('/v1beta2/pipelines/:id', { schema: { params: byId }, config: READ }, async (request) =>
    s.pipelines.get((request.params as { id: string }).id),
  );

  app.post(
    '/v1beta2/pipelines/:id/append',
    { schema: { params: byId, body: PIPELINE_NODES }, config: ADMIN, bodyLimit: PIPELINE_BODY_LIMIT },
    async (request, reply) => {
      await s.pipelines.append(
        (request.params as { id: string }).id,
        request.body as PipelineNodesInput,
        actorOfRequest(request),
      );
      return reply.status(204).send();
    },
  );

  app.delete(
    '/v1beta2/pipelines/:id',
    { schema: { params: byId }, config: ADMIN },
    async (request, reply) => {
      await s.pipelines.delete((request.params as { id: string }).id);
      return reply.status(204).send();
    },
  );
}
