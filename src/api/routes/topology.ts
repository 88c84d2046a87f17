import type { FastifyInstance } from 'fastify';
import { maskedDictionaryQuery } from '../../dictionaries/masked-query.ts';
import type { ViewRecord } from '../../streaming/catalog-resolver.ts';
import type { UdfDefinition } from '../../udf/udf-definition.ts';
import { UDF_KIND } from '../../udf/udf-service.ts';
import { READ } from '../access.ts';
import type { Services } from '../services.ts';
import { buildTopology, type TopologyInput } from '../topology-graph.ts';

const topologyQuery = {
  querystring: {
    type: 'object',
    properties: {
      db: { type: 'string', minLength: 1 },
      // `dashboard`, `schema`, `udf` in the contract: `udf` adds the user-defined functions; the
      // others are accepted and not in the graph yet.
      extraResources: {},
    },
  },
} as const;

/**
 * `GET /v1beta2/topology[?db=..]`: streams (random ones too), views, materialized views, inputs and sources as a graph
 * (see topology-graph.ts); without `db`, every database.
 */
export function topologyRoutes(app: FastifyInstance, s: Services): void {
  app.get('/v1beta2/topology', { schema: topologyQuery, config: READ }, async (request) => {
    const { db, extraResources } = request.query as { db?: string; extraResources?: unknown };
    const extras = new Set(
      [extraResources]
        .flat()
        .flatMap((x) => (typeof x === 'string' ? x.split(',').map((e) => e.trim()) : [])),
    );
    const service = s.inputs;
    const inputs: TopologyInput[] = service
      ? service.store.list().map((record) => ({
          record,
          status: service.running.status(record.key),
          target: service.targetOf(record.value),
        }))
      : [];
    return buildTopology(
      {
        streams: s.streams.list(),
        views: [
          ...s.catalog.list<Partial<ViewRecord>>('view'),
          ...s.catalog.list<Partial<ViewRecord>>('materialized_view'),
        ],
        inputs,
        randomStreams: new Set((s.randoms?.list() ?? []).map((r) => `${r.db}.${r.name}`)),
        sources: s.sources?.topology() ?? [],
        sinks: s.sinks?.topology() ?? [],
        externalStreams: (s.externals?.list() ?? []).map((r) => ({
          db: r.value.db,
          name: r.value.name,
          type: r.value.type,
          ownership: r.audit.created_by,
        })),
        dictionaries: (s.dictionaries?.list() ?? []).map((r) => ({
          db: r.value.db,
          name: r.value.name,
          ownership: r.audit.created_by,
          query: maskedDictionaryQuery(r.value.query),
          description: r.value.description,
          sourceKind: r.value.source.kind,
          ...(r.value.source.kind === 'stream'
            ? { stream: { db: r.value.source.db, name: r.value.source.name } }
            : {}),
        })),
        externalTables: s.externalTables?.list() ?? [],
        ...(extras.has('udf') && s.udfs
          ? {
              udfs: s.catalog.list<UdfDefinition>(UDF_KIND).map((r) => ({
                name: r.value.name,
                type: r.value.type,
                is_aggregation: r.value.is_aggregation,
                return_type: r.value.return_type,
                ownership: r.audit.created_by,
              })),
            }
          : {}),
      },
      db,
    );
  });
}
