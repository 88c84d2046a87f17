import type { FastifyInstance } from 'fastify';
import { err } from '../../errors/tributary-error.ts';
import type { MaterializedViewRecord } from '../../views/materialized-views.ts';
import { parseViewQuery, type ViewCatalogRecord } from '../../views/view-store.ts';
import { ADMIN, READ } from '../access.ts';
import { actorOfRequest } from '../auth.ts';
import type { Services } from '../services.ts';
import { materializedViewPatch, VIEW_CREATE_PROPERTIES, VIEW_UPDATE_BODY } from './view-body-schemas.ts';
import { viewResource } from './views.ts';

/** The one node of a single-node Tributary (GET /v1beta2/cluster answers the same id). */
export const NODE_ID = 1;

const DB = { type: 'string', minLength: 1 } as const;
/** A boolean in a query string (the server does not coerce types). */
const FLAG = { type: 'string', enum: ['true', 'false', '1', '0'] } as const;
const flag = (v: string | undefined) => v === 'true' || v === '1';
const byDb = { querystring: { type: 'object', properties: { db: DB } } } as const;
const withSync = {
  querystring: { type: 'object', properties: { db: DB, sync: FLAG } },
} as const;
const listQuery = {
  querystring: { type: 'object', properties: { db: DB, expand: FLAG } },
} as const;

const createBody = {
  querystring: byDb.querystring,
  body: {
    type: 'object',
    required: ['name', 'query'],
    additionalProperties: false,
    properties: VIEW_CREATE_PROPERTIES,
  },
} as const;

const updateBody = { querystring: byDb.querystring, body: VIEW_UPDATE_BODY } as const;

const transferBody = {
  querystring: withSync.querystring,
  body: {
    type: 'object',
    required: ['from', 'shard', 'to'],
    additionalProperties: false,
    properties: { from: { type: 'integer' }, shard: { type: 'integer' }, to: { type: 'integer' } },
  },
} as const;

export interface MaterializedViewBody {
  name: string;
  query: string;
  description?: string;
  target_stream?: string;
  ttl_expression?: string;
  logstore_retention_bytes?: number;
  logstore_retention_ms?: number;
}

/** Fields of a create that are the target stream's (an implicit target gets them). */
function refuseTargetSettings(body: Partial<MaterializedViewBody>): void {
  if ((body.ttl_expression ?? '') !== '')
    throw err('INVALID_FIELD', {
      field: 'ttl_expression',
      detail: 'set it on the target stream (PATCH /v1beta2/streams/{target})',
    });
}

/** Create a materialized view from a REST body (POST /materialized_views, POST /views with materialized). */
export async function createMaterializedViewFromBody(
  s: Services,
  db: string,
  body: MaterializedViewBody,
  actor: ReturnType<typeof actorOfRequest>,
): Promise<ViewCatalogRecord> {
  refuseTargetSettings(body);
  const target = (body.target_stream ?? '') !== '' ? body.target_stream : undefined;
  const record = await s.mvs.create(
    {
      db,
      name: body.name,
      select: parseViewQuery(body.query),
      ...(target ? { into: { name: target } } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
    },
    actor,
  );
  const created = record as ViewCatalogRecord;
  const v = created.value as MaterializedViewRecord;
  // Retention of an implicit target (an INTO target keeps its own).
  if (
    v.implicit_target &&
    (body.logstore_retention_bytes !== undefined || body.logstore_retention_ms !== undefined)
  ) {
    await s.streams.update(
      db,
      v.target_stream,
      {
        ...(body.logstore_retention_bytes !== undefined
          ? { logstoreRetentionBytes: body.logstore_retention_bytes }
          : {}),
        ...(body.logstore_retention_ms !== undefined
          ? { logstoreRetentionMs: body.logstore_retention_ms }
          : {}),
      },
      actor,
    );
  }
  return created;
}

/** The MaterializedView resource; `expand` adds the running state (status, status_ts, lagging, memory). */
export async function materializedViewResource(
  s: Services,
  record: ViewCatalogRecord,
  expand: boolean,
): Promise<Record<string, unknown>> {
  const base = await viewResource(s.views, record);
  const v = record.value as MaterializedViewRecord;
  const target = s.streams.get(v.db, v.target_stream)?.value;
  const out: Record<string, unknown> = {
    id: base.id,
    name: base.name,
    description: base.description,
    query: base.query,
    create_query: base.create_query,
    target_stream: v.target_stream,
    ttl_expression: target?.ttl?.proton ?? '',
    columns: base.columns,
    logstore_retention_bytes: target?.logstoreRetentionBytes ?? 0,
    logstore_retention_ms: target?.logstoreRetentionMs ?? 0,
    leader_node: NODE_ID,
    created_at: base.created_at,
    created_by: base.created_by,
    last_updated_at: base.last_updated_at,
    last_updated_by: base.last_updated_by,
  };
  const state = s.mvs.state(record);
  out.last_error_message = state.lastError.message;
  if (expand) {
    out.status = state.status;
    out.status_ts = state.statusTs;
    out.lagging = lagging(state.sources);
    out.memory = 0;
  }
  return out;
}

/** Rows committed to the sources that the view has not processed yet. */
function lagging(sources: Record<string, { processedSn: number; endSn: number }>): number {
  let n = 0;
  for (const src of Object.values(sources)) n += Math.max(0, src.endSn - src.processedSn);
  return n;
}

/** Materialized views (spec operations 29-35, plus create and update from the -with-create document). */
export function materializedViewRoutes(app: FastifyInstance, s: Services): void {
  const dbOf = (q: unknown) => (q as { db?: string }).db ?? s.views.defaultDatabase;

  app.get('/v1beta2/materialized_views', { schema: listQuery, config: READ }, async (request) => {
    const { db, expand } = request.query as { db?: string; expand?: string };
    return Promise.all(s.mvs.list(db).map((r) => materializedViewResource(s, r, flag(expand))));
  });

  app.post('/v1beta2/materialized_views', { schema: createBody, config: ADMIN }, async (request, reply) => {
    const record = await createMaterializedViewFromBody(
      s,
      dbOf(request.query),
      request.body as MaterializedViewBody,
      actorOfRequest(request),
    );
    return reply.status(201).send(await materializedViewResource(s, record, true));
  });

  app.get('/v1beta2/materialized_views/:name', { schema: byDb, config: READ }, async (request) => {
    const { name } = request.params as { name: string };
    return materializedViewResource(s, s.mvs.require(dbOf(request.query), name), true);
  });

  app.patch(
    '/v1beta2/materialized_views/:name',
    { schema: updateBody, config: ADMIN },
    async (request, reply) => {
      const { name } = request.params as { name: string };
      const db = dbOf(request.query);
      const body = (request.body ?? {}) as Partial<MaterializedViewBody>;
      const record = s.mvs.require(db, name);
      if (body.query !== undefined && body.query.trim() !== record.value.query.trim())
        throw err('INVALID_FIELD', {
          field: 'query',
          detail: 'the query of a materialized view cannot change; drop the view and create it again',
        });
      await s.mvs.update(db, name, materializedViewPatch(body), actorOfRequest(request));
      return reply.status(204).send();
    },
  );

  app.delete('/v1beta2/materialized_views/:name', { schema: byDb, config: ADMIN }, async (request, reply) => {
    const { name } = request.params as { name: string };
    await s.mvs.drop(dbOf(request.query), name);
    return reply.status(204).send();
  });

  app.post(
    '/v1beta2/materialized_views/:name/pause',
    { schema: withSync, config: ADMIN },
    async (request) => {
      const { name } = request.params as { name: string };
      const { sync } = request.query as { sync?: string };
      await s.mvs.pause(dbOf(request.query), name, actorOfRequest(request), { sync: flag(sync) });
      return {};
    },
  );

  app.post(
    '/v1beta2/materialized_views/:name/resume',
    { schema: withSync, config: ADMIN },
    async (request) => {
      const { name } = request.params as { name: string };
      const { sync } = request.query as { sync?: string };
      await s.mvs.resume(dbOf(request.query), name, actorOfRequest(request), { sync: flag(sync) });
      return {};
    },
  );

  app.get('/v1beta2/materialized_views/:name/stats', { schema: byDb, config: READ }, async (request) => {
    const { name } = request.params as { name: string };
    const db = dbOf(request.query);
    const record = s.mvs.require(db, name);
    const v = record.value as MaterializedViewRecord;
    const state = s.mvs.state(record);
    const stats = await s.streams.statistics(db, v.target_stream);
    const sizes = await s.streams.sizes(db, v.target_stream);
    const laggingStatus: Record<string, Record<string, number>> = {};
    for (const [key, src] of Object.entries(state.sources)) {
      laggingStatus[key] = {
        // Without durable checkpoints (yet) the checkpoint is the processed position itself.
        ckpt_sn: src.processedSn,
        processed_sn: src.processedSn,
        end_sn: src.endSn,
        ...(state.processedTime > 0 ? { processed_record_ts: state.processedTime } : {}),
      };
    }
    return {
      ...(stats.earliestEvent ? { earliest_event: stats.earliestEvent } : {}),
      ...(stats.latestEvent ? { latest_event: stats.latestEvent } : {}),
      historical_data_bytes: sizes.historicalBytes,
      streaming_data_bytes: sizes.streamingBytes,
      row_count: sizes.rowCount,
      lagging: lagging(state.sources),
      leader_node: NODE_ID,
      memory: 0,
      status: state.status,
      status_ts: state.statusTs,
      last_error_message: state.lastError.message,
      nodes: [
        {
          node_id: NODE_ID,
          status: state.status,
          status_ts: state.statusTs,
          last_error_message: state.lastError.message,
          ...(state.lastError.at ? { last_error_message_ts: state.lastError.at } : {}),
          historical_data_bytes: sizes.historicalBytes,
          streaming_data_bytes: sizes.streamingBytes,
          memory: 0,
          checkpoint_size: 0,
          lagging_status: laggingStatus,
        },
      ],
    };
  });

  app.post(
    '/v1beta2/materialized_views/:name/transfer',
    { schema: transferBody, config: ADMIN },
    async (request) => {
      const { name } = request.params as { name: string };
      const db = dbOf(request.query);
      const body = request.body as { from: number; shard: number; to: number };
      const v = s.mvs.require(db, name).value as MaterializedViewRecord;
      for (const [field, node] of [
        ['from', body.from],
        ['to', body.to],
      ] as const) {
        if (node !== NODE_ID)
          throw err('RESOURCE_NOT_FOUND', {
            kind: 'Node',
            name: `${node} (${field}; this cluster has node ${NODE_ID} only)`,
          });
      }
      const shards = s.streams.get(db, v.target_stream)?.value.shards ?? 1;
      if (body.shard < 0 || body.shard >= shards)
        throw err('RESOURCE_NOT_FOUND', {
          kind: 'Shard',
          name: `${body.shard} of ${name} (its shards are 0..${shards - 1})`,
        });
      // One node: the leader of every shard is already node 1.
      return {};
    },
  );
}
