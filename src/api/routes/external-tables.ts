import type { FastifyInstance } from 'fastify';
import type { CatalogRecord } from '../../catalog/catalog.ts';
import { err } from '../../errors/tributary-error.ts';
import {
  type ExternalTableRecord,
  externalTableCreateQuery,
  maskedSettings,
} from '../../external/external-table-definition.ts';
import type { FormatSchemaRecord } from '../../external/format-schemas.ts';
import { ADMIN, READ } from '../access.ts';
import type { Services } from '../services.ts';

const byDb = {
  querystring: { type: 'object', properties: { db: { type: 'string', minLength: 1 } } },
} as const;

/** The contract's ExternalTable: settings as {key, value} strings, secrets masked. */
export function externalTableResource(r: CatalogRecord<ExternalTableRecord>): Record<string, unknown> {
  const t = r.value;
  return {
    name: t.name,
    description: t.comment ?? '',
    type: 's3',
    create_query: externalTableCreateQuery(t),
    settings: Object.entries(maskedSettings(t)).map(([key, value]) => ({ key, value: String(value) })),
    ...r.audit,
  };
}

/** The contract's SchemaResp. */
function schemaResource(r: CatalogRecord<FormatSchemaRecord>): Record<string, unknown> {
  return { name: r.value.name, type: r.value.type, content: r.value.content, ...r.audit };
}

/**
 * Operations 22-24 (external tables: list, get, delete) and 47-48 (format schemas: list, get; and
 * the contract's delete). External tables and schemas are created with SQL.
 */
export function externalTableRoutes(app: FastifyInstance, s: Services): void {
  const dbOf = (q: unknown) => (q as { db?: string }).db ?? 'default';
  const tables = () => {
    if (!s.externalTables) throw err('NOT_IMPLEMENTED', { detail: 'external tables are not available' });
    return s.externalTables;
  };
  const schemas = () => {
    if (!s.formatSchemas) throw err('NOT_IMPLEMENTED', { detail: 'format schemas are not available' });
    return s.formatSchemas;
  };
  app.get('/v1beta2/external_tables', { schema: byDb, config: READ }, async (request) =>
    tables().list(dbOf(request.query)).map(externalTableResource),
  );
  app.get('/v1beta2/external_tables/:name', { schema: byDb, config: READ }, async (request) => {
    const { name } = request.params as { name: string };
    return externalTableResource(tables().require(dbOf(request.query), name));
  });
  app.delete('/v1beta2/external_tables/:name', { schema: byDb, config: ADMIN }, async (request, reply) => {
    const { name } = request.params as { name: string };
    await tables().drop(dbOf(request.query), name, { ifExists: false });
    return reply.status(204).send();
  });
  app.get('/v1beta2/schemas', { config: READ }, async () => schemas().list().map(schemaResource));
  app.get('/v1beta2/schemas/:name', { config: READ }, async (request) => {
    const { name } = request.params as { name: string };
    const r = schemas().get(name);
    if (!r) throw err('FORMAT_SCHEMA_NOT_FOUND', { name });
    return schemaResource(r);
  });
  app.delete('/v1beta2/schemas/:name', { config: ADMIN }, async (request, reply) => {
    const { name } = request.params as { name: string };
    await schemas().drop(name, { ifExists: false });
    return reply.status(204).send();
  });
}
