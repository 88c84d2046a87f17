import type { FastifyInstance } from 'fastify';
import { err } from '../../errors/tributary-error.ts';
import type { UdfInput } from '../../udf/udf-definition.ts';
import { createdUdf } from '../../udf/udf-resource.ts';
import type { UdfService } from '../../udf/udf-service.ts';
import { ADMIN, READ } from '../access.ts';
import { actorOfRequest } from '../auth.ts';
import type { Services } from '../services.ts';

const UDF_BODY_LIMIT = 1024 * 1024;
const byName = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 256 } },
} as const;
const TEXT = { type: 'string', maxLength: 65536 } as const;

/** CreateUDFRequest (the contract's create and update body); the meaning of each field is checked by udf-definition.ts. */
const udfBody = {
  type: 'object',
  required: ['name', 'type', 'return_type'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 128 },
    type: { type: 'string', enum: ['javascript', 'remote'] },
    description: TEXT,
    arguments: {
      type: 'array',
      maxItems: 64,
      items: {
        type: 'object',
        required: ['name', 'type'],
        additionalProperties: false,
        properties: { name: { type: 'string', minLength: 1, maxLength: 128 }, type: TEXT },
      },
    },
    return_type: { type: 'string', minLength: 1, maxLength: 65536 },
    is_aggregation: { type: 'boolean' },
    source: { type: 'string', maxLength: UDF_BODY_LIMIT },
    url: { type: 'string', maxLength: 8192 },
    auth_method: { type: 'string', enum: ['none', 'auth_header'] },
    auth_context: {
      type: 'object',
      additionalProperties: false,
      properties: {
        key_name: { type: 'string', maxLength: 1024 },
        key_value: { type: 'string', maxLength: 8192 },
        auth_header: { type: 'string', maxLength: 1024 },
        auth_value: { type: 'string', maxLength: 8192 },
      },
    },
    execution_timeout: { type: 'integer', minimum: 1, maximum: 600000 },
    /** Proton's: replace a function of that name instead of answering 409. */
    replace_if_exists: { type: 'boolean' },
  },
} as const;

function udfsOf(s: Services): UdfService {
  if (!s.udfs)
    throw err('NOT_IMPLEMENTED', { detail: 'user-defined functions are not enabled on this server' });
  return s.udfs;
}

/** User-defined functions (operations 67-68, and the create, update and delete routes). */
export function udfRoutes(app: FastifyInstance, s: Services): void {
  app.get('/v1beta2/udfs', { config: READ }, async () => udfsOf(s).list());

  app.post(
    '/v1beta2/udfs',
    { schema: { body: udfBody }, config: ADMIN, bodyLimit: 2 * UDF_BODY_LIMIT },
    async (request, reply) =>
      reply.status(201).send(
        createdUdf(
          await udfsOf(s).create(request.body as UdfInput, actorOfRequest(request), {
            replace: (request.body as { replace_if_exists?: boolean }).replace_if_exists === true,
          }),
        ),
      ),
  );

  app.get('/v1beta2/udfs/:name', { schema: { params: byName }, config: READ }, async (request) =>
    udfsOf(s).get((request.params as { name: string }).name),
  );

  app.put(
    '/v1beta2/udfs/:name',
    { schema: { params: byName, body: udfBody }, config: ADMIN, bodyLimit: 2 * UDF_BODY_LIMIT },
    async (request) => {
      const { name } = request.params as { name: string };
      // The path names the function replaced; PUT does not rename a function.
      const body = { ...(request.body as UdfInput), name };
      udfsOf(s).get(name);
      return createdUdf(await udfsOf(s).create(body, actorOfRequest(request), { replace: true }));
    },
  );

  app.delete('/v1beta2/udfs/:name', { schema: { params: byName }, config: ADMIN }, async (request, reply) => {
    const { name } = request.params as { name: string };
    if (!(await udfsOf(s).drop(name))) throw err('UDF_NOT_FOUND', { name });
    return reply.status(204).send();
  });
}
