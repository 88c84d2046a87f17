import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { err } from '../../errors/tributary-error.ts';
import { type BatchingPolicy, DEFAULT_BATCHING } from '../../queries/query-types.ts';
import { ResultBatcher } from '../../queries/result-batcher.ts';
import type { RunningQuery } from '../../queries/running-query.ts';
import { planScript } from '../../queries/script.ts';
import { READ, RUN } from '../access.ts';
import { actorOfRequest } from '../auth.ts';
import { EventStream } from '../event-stream.ts';
import type { Services } from '../services.ts';

const runQuery = {
  body: {
    type: 'object',
    required: ['sql'],
    additionalProperties: false,
    properties: {
      sql: { type: 'string', minLength: 1 },
      name: { type: 'string' },
      description: { type: 'string' },
      tags: { type: 'array', items: { type: 'string' } },
      type: { type: 'string', enum: ['historical', 'ddl', 'streaming'] },
      batching_policy: {
        type: 'object',
        additionalProperties: false,
        properties: {
          count: { type: 'integer', minimum: 1, maximum: 1000000 },
          time_ms: { type: 'integer', minimum: 0, maximum: 3600000 },
        },
      },
    },
  },
} as const;

interface RunQueryBody {
  sql: string;
  name?: string;
  description?: string;
  tags?: string[];
  type?: 'historical' | 'ddl' | 'streaming';
  batching_policy?: Partial<BatchingPolicy>;
}

const METRICS_INTERVAL_MS = 1000;

/** Stream a query's results as server-sent events until it ends or the client goes away. */
async function streamResults(q: RunningQuery, policy: BatchingPolicy, reply: FastifyReply) {
  reply.hijack();
  const events = new EventStream(reply.raw);
  events.open();
  events.event('query', q.snapshot());
  const batcher = new ResultBatcher(policy, (rows) => events.rows(rows));
  q.onRows((rows) => {
    batcher.add(rows);
    return events.drained();
  });
  const metrics = setInterval(() => events.event('metrics', q.metrics()), METRICS_INTERVAL_MS);
  // A client that disconnects cancels its query (a no-op once the query has ended).
  reply.raw.on('close', () => q.cancel());
  q.onEnd((info) => {
    clearInterval(metrics);
    batcher.close();
    events.event('metrics', q.metrics());
    events.event('query', info);
    events.end();
  });
  await q.start();
}

/** 403 unless the request's user started the query or is an admin (the owner is not named). */
function requireOwnerOrAdmin(request: FastifyRequest, q: RunningQuery, verb: string): void {
  if (request.user.role === 'admin' || q.owner === request.user.username) return;
  throw err('FORBIDDEN_READ_ONLY', {
    user: request.user.username,
    action: `${verb} a query another user started`,
  });
}

/** Queries: run (SSE), list, get, cancel, delete, pipeline. */
export function queryRoutes(app: FastifyInstance, s: Services): void {
  app.post('/v1beta2/queries', { schema: runQuery, config: RUN }, async (request, reply) => {
    const body = request.body as RunQueryBody;
    // Several `;`-separated statements run in order; the last one's rows are streamed.
    const plan = await planScript(
      s.planner,
      body.sql,
      { user: request.user, ...(body.type ? { type: body.type } : {}) },
      new AbortController().signal,
    );
    if (plan.kind === 'statement') {
      await plan.run(new AbortController().signal);
      return reply.status(204).send();
    }
    const q = s.queries.add(
      {
        sql: body.sql,
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.tags ? { tags: body.tags } : {}),
      },
      plan,
      actorOfRequest(request),
    );
    await streamResults(q, { ...DEFAULT_BATCHING, ...body.batching_policy }, reply);
  });

  app.get('/v1beta2/queries', { config: READ }, async (request) => {
    const { tag } = request.query as { tag?: string };
    return s.queries.list(tag);
  });

  app.get('/v1beta2/queries/:id', { config: READ }, async (request) =>
    s.queries.get((request.params as { id: string }).id).snapshot(),
  );

  // A read_only user may cancel and delete its own queries only; an admin, any query.
  app.post('/v1beta2/queries/:id/cancel', { config: RUN }, async (request, reply) => {
    const { id } = request.params as { id: string };
    requireOwnerOrAdmin(request, s.queries.get(id), 'cancel');
    s.queries.cancel(id);
    return reply.status(204).send();
  });

  app.delete('/v1beta2/queries/:id', { config: RUN }, async (request, reply) => {
    const { id } = request.params as { id: string };
    requireOwnerOrAdmin(request, s.queries.get(id), 'delete');
    s.queries.delete(id);
    return reply.status(204).send();
  });

  app.get('/v1beta2/queries/:id/pipeline', { config: READ }, async (request) => {
    const steps = s.queries.get((request.params as { id: string }).id).pipeline();
    return {
      nodes: steps.map((st) => ({
        id: st.id,
        name: st.name,
        status: st.status,
        metric: {
          processed_bytes: st.processedBytes,
          processing_time_ns: st.processingTimeNs,
          ...(st.source
            ? {
                committed_sn: st.source.committedSn,
                processed_sn: st.source.processedSn,
                lag: Math.max(0, st.source.committedSn - st.source.processedSn),
              }
            : {}),
        },
      })),
      edges: steps.flatMap((st) => st.inputs.map((from) => ({ from, to: st.id }))),
    };
  });
}
