import type { FastifyInstance } from 'fastify';
import { err } from '../../errors/tributary-error.ts';
import { parseViewQuery, type ViewCatalogRecord, type ViewStore } from '../../views/view-store.ts';
import { ADMIN, READ } from '../access.ts';
import { actorOfRequest } from '../auth.ts';
import type { Services } from '../services.ts';
import { createMaterializedViewFromBody } from './materialized-views.ts';
import { materializedViewPatch, VIEW_CREATE_PROPERTIES, VIEW_UPDATE_BODY } from './view-body-schemas.ts';

const DB = { type: 'string', minLength: 1 } as const;
const byDb = { querystring: { type: 'object', properties: { db: DB } } } as const;

const createView = {
  querystring: byDb.querystring,
  body: {
    type: 'object',
    required: ['name', 'query'],
    additionalProperties: false,
    properties: { ...VIEW_CREATE_PROPERTIES, materialized: { type: 'boolean' } },
  },
} as const;

const updateView = { querystring: byDb.querystring, body: VIEW_UPDATE_BODY } as const;

interface ViewBody {
  name?: string;
  query?: string;
  description?: string;
  materialized?: boolean;
  target_stream?: string;
  ttl_expression?: string;
  logstore_retention_bytes?: number;
  logstore_retention_ms?: number;
}

/** Settings of a materialized view's storage: refused (when set) for a plain view. */
function refuseStorageFields(body: ViewBody): void {
  const set: [string, boolean][] = [
    ['target_stream', (body.target_stream ?? '') !== ''],
    ['ttl_expression', (body.ttl_expression ?? '') !== ''],
    ['logstore_retention_bytes', (body.logstore_retention_bytes ?? 0) !== 0],
    ['logstore_retention_ms', (body.logstore_retention_ms ?? 0) !== 0],
  ];
  const found = set.find(([, isSet]) => isSet);
  if (found)
    throw err('INVALID_FIELD', {
      field: found[0],
      detail: 'applies to materialized views only (a view stores nothing)',
    });
}

/** `nullable(...)`, also inside `low_cardinality(...)`. */
function isNullableType(type: string): boolean {
  return /^(low_cardinality\()?nullable\(/i.test(type.trim());
}

/** The View resource of the contract (columns as the engine describes the view's query now). */
export async function viewResource(
  views: ViewStore,
  record: ViewCatalogRecord,
): Promise<Record<string, unknown>> {
  const v = record.value;
  const columns = await views.columns(record);
  return {
    id: v.id ?? `${v.db}.${v.name}`,
    name: v.name,
    description: v.description ?? '',
    query: v.query,
    create_query: views.createQuery(v),
    target_stream: v.target_stream ?? '',
    ttl: '',
    ttl_expression: '',
    columns: columns.map((c) => ({
      name: c.name,
      type: c.type,
      nullable: isNullableType(c.type),
      default: '',
      comment: '',
      codec: '',
    })),
    materialized: v.materialized,
    logstore_retention_bytes: 0,
    logstore_retention_ms: 0,
    ...record.audit,
  };
}

/** Views: list, create, get, patch, delete (materialized views: see the materialized_views routes). */
export function viewRoutes(app: FastifyInstance, s: Services): void {
  const dbOf = (q: unknown) => (q as { db?: string }).db ?? s.views.defaultDatabase;

  app.get('/v1beta2/views', { schema: byDb, config: READ }, async (request) => {
    const { db } = request.query as { db?: string };
    return Promise.all(s.views.list(db).map((r) => viewResource(s.views, r)));
  });

  app.post('/v1beta2/views', { schema: createView, config: ADMIN }, async (request, reply) => {
    const body = request.body as ViewBody & { name: string; query: string };
    if (body.materialized) {
      const { materialized: _, ...mv } = body;
      const record = await createMaterializedViewFromBody(
        s,
        dbOf(request.query),
        mv,
        actorOfRequest(request),
      );
      return reply.status(201).send(await viewResource(s.views, record));
    }
    refuseStorageFields(body);
    const record = await s.views.create(
      {
        db: dbOf(request.query),
        name: body.name,
        select: parseViewQuery(body.query),
        ...(body.description !== undefined ? { description: body.description } : {}),
      },
      actorOfRequest(request),
    );
    return reply.status(201).send(await viewResource(s.views, record as ViewCatalogRecord));
  });

  app.get('/v1beta2/views/:name', { schema: byDb, config: READ }, async (request) => {
    const { name } = request.params as { name: string };
    return viewResource(s.views, s.views.require(dbOf(request.query), name));
  });

  app.patch('/v1beta2/views/:name', { schema: updateView, config: ADMIN }, async (request, reply) => {
    const { name } = request.params as { name: string };
    const body = (request.body ?? {}) as ViewBody;
    const db = dbOf(request.query);
    s.views.require(db, name);
    if (s.mvs.get(db, name)) {
      if (body.query !== undefined)
        throw err('INVALID_FIELD', {
          field: 'query',
          detail: 'the query of a materialized view cannot change; drop the view and create it again',
        });
      await s.mvs.update(db, name, materializedViewPatch(body), actorOfRequest(request));
      return reply.status(204).send();
    }
    refuseStorageFields(body);
    await s.views.update(
      db,
      name,
      {
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.query !== undefined ? { select: parseViewQuery(body.query) } : {}),
      },
      actorOfRequest(request),
    );
    return reply.status(204).send();
  });

  app.delete('/v1beta2/views/:name', { schema: byDb, config: ADMIN }, async (request, reply) => {
    const { name } = request.params as { name: string };
    const db = dbOf(request.query);
    if (s.mvs.get(db, name)) await s.mvs.drop(db, name);
    else await s.views.drop(db, name);
    return reply.status(204).send();
  });
}
