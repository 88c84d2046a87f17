import type { FastifyInstance } from 'fastify';
import { err } from '../../errors/tributary-error.ts';
import { planScript } from '../../queries/script.ts';
import { RUN } from '../access.ts';
import type { Services } from '../services.ts';

const exec = {
  body: {
    type: 'object',
    required: ['sql', 'type'],
    additionalProperties: false,
    properties: {
      sql: { type: 'string', minLength: 1 },
      type: { type: 'string', enum: ['historical', 'ddl'] },
      timeout_ms: { type: 'integer', minimum: 1, maximum: 86400000 },
    },
  },
} as const;

export const DEFAULT_EXEC_TIMEOUT_MS = 30000;

/**
 * `POST /exec`: a historical query answered as one JSON document `{columns, data}`, or a DDL
 * answered 204. `timeout_ms` (default 30000) stops the engine query and answers QUERY_TIMEOUT.
 */
export function execRoutes(app: FastifyInstance, s: Services): void {
  app.post('/v1beta2/exec', { schema: exec, config: RUN }, async (request, reply) => {
    const body = request.body as { sql: string; type: 'historical' | 'ddl'; timeout_ms?: number };
    const timeoutMs = body.timeout_ms ?? DEFAULT_EXEC_TIMEOUT_MS;
    const controller = new AbortController();
    // A client that goes away before the answer stops the engine query.
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) controller.abort();
    });
    // Several `;`-separated statements run in order; the last one answers.
    const plan = await planScript(
      s.planner,
      body.sql,
      { user: request.user, type: body.type, execType: body.type, timeoutMs },
      controller.signal,
    );
    if (plan.kind === 'statement') {
      await plan.run(controller.signal);
      return reply.status(204).send();
    }
    if (plan.streaming) {
      await plan.dispose?.();
      throw err('WRONG_QUERY_TYPE', {
        detail:
          'this SQL is a streaming query, which never ends; run it with POST /v1beta2/queries, or read the stored rows with table(<stream>)',
      });
    }
    const rows: string[] = [];
    await plan.run(
      {
        rows: (batch) => {
          for (const row of batch) rows.push(row);
        },
      },
      controller.signal,
    );
    const payload = `{"columns":${JSON.stringify(plan.header)},"data":[${rows.join(',')}]}`;
    return reply.status(200).type('application/json; charset=utf-8').send(payload);
  });
}
