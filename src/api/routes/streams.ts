import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import type { CatalogRecord } from '../../catalog/catalog.ts';
import { err } from '../../errors/tributary-error.ts';
import { resolveIngestFormat } from '../../stream/ingest-format.ts';
import type { StreamDefinition } from '../../stream/stream-definition.ts';
import type { StreamSizes } from '../../stream/stream-stats.ts';
import type { IngestOptions } from '../../stream/stream-store.ts';
import type { CommitResult } from '../../stream/stream-writer.ts';
import { ADMIN, READ } from '../access.ts';
import { actorOfRequest } from '../auth.ts';
import { DECODED_BODY_LIMIT } from '../request-limits.ts';
import type { Services } from '../services.ts';
import { fieldExpr } from './field-expr.ts';
import { type StreamDefBody, streamSpecOf } from './stream-def.ts';

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

/** Options of an ingest request without an idempotency id (shared: nothing made per request). */
const NO_INGEST_OPTIONS: IngestOptions = Object.freeze({});

/** Response header of ingest: how many rows the request wrote. */
export const ROWS_WRITTEN_HEADER = 'x-tributary-rows-written';

const STREAM_NAME = { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_]{0,63}$' } as const;
const DB = { type: 'string', minLength: 1 } as const;

const columnDef = {
  type: 'object',
  required: ['name', 'type'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1 },
    type: { type: 'string', minLength: 1 },
    default: { type: 'string' },
    codec: { type: 'string' },
    comment: { type: 'string' },
    ttl_expression: { type: 'string' },
    skipping_index_expression: { type: 'string' },
  },
} as const;

const named = {
  type: 'object',
  required: ['name', 'columns'],
  properties: { name: { type: 'string' }, columns: { type: 'array', items: { type: 'string' } } },
} as const;

const createStream = {
  querystring: { type: 'object', properties: { db: DB } },
  body: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: {
      name: STREAM_NAME,
      description: { type: 'string' },
      columns: { type: 'array', items: columnDef },
      engine: { type: 'string' },
      event_time_column: { type: 'string' },
      event_time_timezone: { type: 'string' },
      logstore_retention_bytes: { type: 'integer' },
      logstore_retention_ms: { type: 'integer' },
      mode: { type: 'string', enum: ['append', 'changelog', 'changelog_kv', 'versioned_kv'] },
      order_by_expression: { type: 'string' },
      order_by_granularity: { type: 'string' },
      partition_by_granularity: { type: 'string' },
      primary_key: { type: 'string' },
      replication_factor: { type: 'integer', minimum: 1 },
      shards: { type: 'integer', minimum: 1 },
      ttl_expression: { type: 'string' },
      column_families: { type: 'array', items: named },
      secondary_indexes: { type: 'array', items: named },
    },
  },
} as const;

const updateStream = {
  querystring: { type: 'object', properties: { db: DB } },
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      description: { type: 'string' },
      ttl_expression: { type: 'string' },
      logstore_retention_bytes: { type: 'integer' },
      logstore_retention_ms: { type: 'integer' },
    },
  },
} as const;

const listStreams = {
  querystring: {
    type: 'object',
    properties: { db: DB, expand: { type: 'string', enum: ['true', 'false', '1', '0', ''] } },
  },
} as const;

const byName = { querystring: { type: 'object', properties: { db: DB } } } as const;

const ingest = {
  querystring: { type: 'object', properties: { db: DB, format: { type: 'string' } } },
} as const;

/**
 * The request body as bytes, gunzipped/inflated when its Content-Encoding says so. Decompression
 * stops at DECODED_BODY_LIMIT (a gzip bomb answers 413, not an out-of-memory).
 */
async function decodeBody(raw: unknown, encoding: string | undefined): Promise<Buffer> {
  const body = Buffer.isBuffer(raw) ? raw : Buffer.alloc(0);
  const enc = encoding?.trim().toLowerCase();
  if (!enc || enc === 'identity') return body;
  const gzip = enc === 'gzip' || enc === 'x-gzip';
  if (!gzip && enc !== 'deflate')
    throw err('UNSUPPORTED_MEDIA_TYPE', { type: `Content-Encoding ${encoding}` });
  try {
    const options = { maxOutputLength: DECODED_BODY_LIMIT };
    return gzip ? await gunzipAsync(body, options) : await inflateAsync(body, options);
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      throw err('DECODED_BODY_TOO_LARGE', { encoding: enc, limit: DECODED_BODY_LIMIT });
    throw err('INGEST_MALFORMED', {
      detail: `the body is not valid ${enc} (${e instanceof Error ? e.message : String(e)})`,
    });
  }
}

/** The Stream resource of the contract, from a catalog record (sizes with `expand`). */
export function streamResource(
  record: CatalogRecord<StreamDefinition>,
  sizes?: StreamSizes,
): Record<string, unknown> {
  const d = record.value;
  return {
    name: d.name,
    description: d.description,
    // A plain table (CREATE STREAM ... ENGINE = Memory) names its engine, as Proton's system.tables does.
    engine: d.tableEngine ? (/^[^(\s]+/.exec(d.tableEngine)?.[0] ?? d.tableEngine) : 'Stream',
    mode: d.mode,
    ...(d.primaryKey ? { primary_key: d.primaryKey.proton } : {}),
    create_query: d.createQuery,
    ttl: d.ttl?.proton ?? '',
    ttl_expression: d.ttl?.proton ?? '',
    columns: d.columns.map((c) => ({
      name: c.name,
      type: c.type,
      nullable: c.type.startsWith('nullable('),
      default: (c.default ?? c.alias)?.proton ?? '',
      codec: c.codec ? `CODEC(${c.codec})` : '',
      comment: c.comment ?? '',
    })),
    column_families: [],
    secondary_indexes: [],
    is_external: false,
    logstore_retention_bytes: d.logstoreRetentionBytes,
    logstore_retention_ms: d.logstoreRetentionMs,
    ...record.audit,
    ...(sizes
      ? {
          row_count: sizes.rowCount,
          historical_data_bytes: sizes.historicalBytes,
          streaming_data_bytes: sizes.streamingBytes,
        }
      : {}),
  };
}

/** Streams: list, create, get, patch, delete, stats, ingest; and the database list. */
export function streamRoutes(app: FastifyInstance, s: Services): void {
  const dbOf = (q: unknown) => (q as { db?: string }).db ?? 'default';
  // The stream a log or timeplus external stream keeps its rows in is the external stream's, not a
  // stream of its own: /external_streams shows it; here it is not listed and not found by name.
  const backsExternal = (db: string, name: string) => s.externals?.get(db, name) !== undefined;
  const visible = (db: string, name: string) => {
    if (backsExternal(db, name))
      throw err('UNKNOWN_STREAM', { name: db === 'default' ? name : `${db}.${name}` });
  };

  app.get('/v1beta2/databases', { config: READ }, async () =>
    (await s.streams.databases()).map((d) => ({ name: d.name })),
  );

  app.get('/v1beta2/streams', { schema: listStreams, config: READ }, async (request) => {
    const q = request.query as { db?: string; expand?: string };
    const records = s.streams.list(q.db).filter((r) => !backsExternal(r.value.db, r.value.name));
    if (q.expand !== 'true' && q.expand !== '1') return records.map((r) => streamResource(r));
    return Promise.all(
      records.map(async (r) => streamResource(r, await s.streams.sizes(r.value.db, r.value.name))),
    );
  });

  app.post('/v1beta2/streams', { schema: createStream, config: ADMIN }, async (request, reply) => {
    const spec = streamSpecOf(request.body as StreamDefBody, dbOf(request.query));
    const record = await s.streams.create(spec, actorOfRequest(request));
    return reply.status(201).send(streamResource(record));
  });

  app.get('/v1beta2/streams/:name', { schema: byName, config: READ }, async (request) => {
    const { name } = request.params as { name: string };
    const db = dbOf(request.query);
    visible(db, name);
    const record = s.streams.require(db, name);
    return streamResource(record, await s.streams.sizes(db, name));
  });

  app.patch('/v1beta2/streams/:name', { schema: updateStream, config: ADMIN }, async (request) => {
    const { name } = request.params as { name: string };
    const body = (request.body ?? {}) as {
      description?: string;
      ttl_expression?: string;
      logstore_retention_bytes?: number;
      logstore_retention_ms?: number;
    };
    visible(dbOf(request.query), name);
    const record = await s.streams.update(
      dbOf(request.query),
      name,
      {
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.ttl_expression !== undefined
          ? {
              ttl:
                body.ttl_expression.trim() === '' ? null : fieldExpr('ttl_expression', body.ttl_expression),
            }
          : {}),
        ...(body.logstore_retention_bytes !== undefined
          ? { logstoreRetentionBytes: body.logstore_retention_bytes }
          : {}),
        ...(body.logstore_retention_ms !== undefined
          ? { logstoreRetentionMs: body.logstore_retention_ms }
          : {}),
      },
      actorOfRequest(request),
    );
    return streamResource(record);
  });

  app.delete('/v1beta2/streams/:name', { schema: byName, config: ADMIN }, async (request, reply) => {
    const { name } = request.params as { name: string };
    s.inputs?.assertNoWriters(dbOf(request.query), name);
    s.sources?.assertNoWriters(dbOf(request.query), name);
    // The stream a log or timeplus external stream keeps its rows in goes with the external stream.
    if (s.externals?.get(dbOf(request.query), name)) await s.externals.drop(dbOf(request.query), name);
    else await s.streams.drop(dbOf(request.query), name);
    return reply.status(204).send();
  });

  app.get('/v1beta2/streams/:name/stats', { schema: byName, config: READ }, async (request) => {
    const { name } = request.params as { name: string };
    visible(dbOf(request.query), name);
    const st = await s.streams.statistics(dbOf(request.query), name);
    return {
      ...(st.earliestEvent ? { earliest_event: st.earliestEvent } : {}),
      ...(st.latestEvent ? { latest_event: st.latestEvent } : {}),
      historical_data_bytes: st.historicalBytes,
      streaming_data_bytes: st.streamingBytes,
      row_count: st.rowCount,
      nodes: [
        {
          node_id: 1,
          historical_data_bytes: st.historicalBytes,
          streaming_data_bytes: st.streamingBytes,
          lagging_status: {
            '0': { applied_sn: st.appliedSn, committed_sn: st.committedSn, timestamp: Date.now() },
          },
          replication_status: {},
        },
      ],
    };
  });

  // Ingest takes the body as raw bytes whatever its Content-Type: the stream layer parses it (and
  // hands the request's own bytes to the engine when it can), so fastify's JSON parser is skipped.
  void app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    raw.post('/v1beta2/streams/:name/ingest', { schema: ingest, config: ADMIN }, (request, reply) => {
      // Not async: no async frame held while the request waits for its commit. A throw here
      // reaches the error handler as an async handler's rejection would.
      const { name } = request.params as { name: string };
      const q = request.query as { db?: string; format?: string };
      const { format, charset } = resolveIngestFormat(request.headers['content-type'], q.format);
      const id = request.headers['x-timeplus-idempotent-id'];
      if (Array.isArray(id))
        throw err('INVALID_FIELD', { field: 'x-timeplus-idempotent-id', detail: 'must be given once' });
      const encoding = request.headers['content-encoding'];
      const db = q.db ?? 'default';
      const options = id ? { idempotencyId: id } : NO_INGEST_OPTIONS;
      // A body sent as it is (the usual case) is not awaited: one promise and one turn less per request.
      const committed =
        encoding === undefined && Buffer.isBuffer(request.body)
          ? s.streams.ingestBody(db, name, request.body, format, charset, options)
          : decodeBody(request.body, encoding).then((body) =>
              s.streams.ingestBody(db, name, body, format, charset, options),
            );
      // The contract's answer is 200 with an empty body; the header says what this request wrote
      // (0 for an empty body, or a retry of an idempotency id already committed). The promise goes
      // back to Fastify, which answers a refusal (whatever was thrown) as for an async handler. An
      // anonymous arrow: the TypeScript loader names (defineProperty) every arrow assigned to a name.
      return committed.then((result: CommitResult) =>
        reply
          .status(200)
          .header(ROWS_WRITTEN_HEADER, result.duplicate ? 0 : result.count)
          .send(),
      );
    });
  });
}
