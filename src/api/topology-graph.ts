import type { Actor } from '../catalog/audit.ts';
import type { CatalogRecord } from '../catalog/catalog.ts';
import type { InputRecord } from '../connectors/inputs/input-store.ts';
import type { InputStatus } from '../connectors/inputs/running-inputs.ts';
import type { TargetStream } from '../connectors/inputs/target-stream.ts';
import type { SinkTopologyNode } from '../connectors/sinks/sink-service.ts';
import type { SourceTopologyNode } from '../connectors/sources/source-service.ts';
import type { ExternalTableRecord } from '../external/external-table-definition.ts';
import type { FunctionCall } from '../sql/ast/expression.ts';
import { findAll } from '../sql/ast/walk.ts';
import { parseQuery } from '../sql/parser/parse.ts';
import type { StreamDefinition } from '../stream/stream-definition.ts';
import type { ViewRecord } from '../streaming/catalog-resolver.ts';
import { tableReferences } from '../streaming/view-references.ts';

/** The contract's Topology (`Graph`): resources as nodes, data flow as edges, "depends on" as dependencies. */
export interface Topology {
  nodes: TopologyNode[];
  /** Data flows from `source` to `target`. */
  edges: TopologyEdge[];
  /** `source` depends on `target` (cannot work without it). */
  dependencies: TopologyEdge[];
}

export interface TopologyNode {
  db: string;
  id: string;
  name: string;
  type:
    | 'stream'
    | 'random_stream'
    | 'view'
    | 'materialized_view'
    | 'input'
    | 'source'
    | 'sink'
    | 'external_stream'
    | 'external_table'
    | 'dictionary'
    | 'udf';
  ownership: Actor;
  properties: Record<string, unknown>;
}

export interface TopologyEdge {
  source: string;
  target: string;
}

export interface TopologyInput {
  record: InputRecord;
  status: InputStatus | undefined;
  target: TargetStream;
}

/** A dictionary as the graph shows it: the stream it reads, if its source is a stream. */
export interface TopologyDictionary {
  db: string;
  name: string;
  ownership: Actor;
  query: string;
  description: string;
  /** `{db, name}` of the stream a TIMEPLUS / CLICKHOUSE source reads. */
  stream?: { db: string; name: string };
  /** `stream`, `file` or `http`. */
  sourceKind: string;
}

/** A source as the graph shows it (from SourceService). */
export type TopologySource = SourceTopologyNode;

export interface TopologyResources {
  streams: readonly CatalogRecord<StreamDefinition>[];
  /** `db.name` of the streams that are random streams (CREATE RANDOM STREAM). */
  randomStreams?: ReadonlySet<string>;
  sources?: readonly TopologySource[];
  /** Catalog kind `view` (materialized ones have `materialized: true`) and `materialized_view`. */
  views: readonly CatalogRecord<Partial<ViewRecord>>[];
  inputs: readonly TopologyInput[];
  /** Sinks (from SinkService): edges from what their query reads. */
  sinks?: readonly SinkTopologyNode[];
  /** External streams (from ExternalStreams): written by materialized views INTO them. */
  externalStreams?: readonly { db: string; name: string; type: string; ownership: Actor }[];
  dictionaries?: readonly TopologyDictionary[];
  /** External tables (s3): nodes that views can read. */
  externalTables?: readonly CatalogRecord<ExternalTableRecord>[];
  /** User-defined functions (`extraResources=udf`): the views calling one depend on it. */
  udfs?: readonly TopologyUdf[];
}

/** A user-defined function as the graph shows it. */
export interface TopologyUdf {
  name: string;
  type: string;
  is_aggregation: boolean;
  return_type: string;
  ownership: Actor;
}

/**
 * Node ids: `stream:db.name` (random streams too), `view:db.name`, `materialized_view:db.name`,
 * `input:name`, `source:<id>`, `sink:<id>`, `external_stream:db.name`.
 */
export function nodeId(type: TopologyNode['type'], db: string, name: string): string {
  if (type === 'input' || type === 'source' || type === 'sink') return `${type}:${name}`;
  return `${type === 'random_stream' ? 'stream' : type}:${db}.${name}`;
}

/**
 * The graph of `resources`, restricted to database `db` when given (an input belongs to its target
 * stream's database). Edges and dependencies are kept only between nodes of the graph: a view
 * reading another database's stream has no edge in a per-database topology.
 */
export function buildTopology(resources: TopologyResources, db?: string): Topology {
  const nodes: TopologyNode[] = [];
  const edges: TopologyEdge[] = [];
  const dependencies: TopologyEdge[] = [];
  const inDb = (d: string) => db === undefined || d === db;
  /** `db.name` -> node id of the stream or view of that name. */
  const tables = new Map<string, string>();

  // A log or timeplus external stream keeps its rows in a stream of its name: one node, the external one.
  const external = new Set((resources.externalStreams ?? []).map((x) => `${x.db}.${x.name}`));
  for (const r of resources.streams) {
    const s = r.value;
    if (!inDb(s.db) || external.has(`${s.db}.${s.name}`)) continue;
    const id = nodeId('stream', s.db, s.name);
    tables.set(`${s.db}.${s.name}`, id);
    const random = resources.randomStreams?.has(`${s.db}.${s.name}`) ?? false;
    nodes.push({
      db: s.db,
      id,
      name: s.name,
      type: random ? 'random_stream' : 'stream',
      ownership: r.audit.created_by,
      properties: { mode: s.mode, storage_type: s.storageType, description: s.description },
    });
  }

  for (const x of resources.externalStreams ?? []) {
    if (!inDb(x.db)) continue;
    const id = nodeId('external_stream', x.db, x.name);
    tables.set(`${x.db}.${x.name}`, id);
    nodes.push({
      db: x.db,
      id,
      name: x.name,
      type: 'external_stream',
      ownership: x.ownership,
      properties: { type: x.type },
    });
  }
  for (const r of resources.externalTables ?? []) {
    const t = r.value;
    if (!inDb(t.db)) continue;
    const id = nodeId('external_table', t.db, t.name);
    tables.set(`${t.db}.${t.name}`, id);
    nodes.push({
      db: t.db,
      id,
      name: t.name,
      type: 'external_table',
      ownership: r.audit.created_by,
      properties: { external_type: 's3', description: t.comment ?? '' },
    });
  }

  const views: { id: string; db: string; name: string; view: Partial<ViewRecord> }[] = [];
  for (const r of resources.views) {
    const { db: vdb, name } = viewName(r);
    if (!inDb(vdb)) continue;
    const v = r.value;
    const type = v.materialized || r.kind === 'materialized_view' ? 'materialized_view' : 'view';
    const id = nodeId(type, vdb, name);
    if (!tables.has(`${vdb}.${name}`)) tables.set(`${vdb}.${name}`, id);
    views.push({ id, db: vdb, name, view: v });
    nodes.push({
      db: vdb,
      id,
      name,
      type,
      ownership: r.audit.created_by,
      properties: {
        query: v.query ?? '',
        description: v.description ?? '',
        ...(type === 'materialized_view' && v.target_stream ? { target_stream: v.target_stream } : {}),
      },
    });
  }

  const link = (from: string | undefined, to: string | undefined, dependent: 'from' | 'to') => {
    if (!from || !to || from === to) return;
    edges.push({ source: from, target: to });
    dependencies.push(dependent === 'to' ? { source: to, target: from } : { source: from, target: to });
  };

  for (const { id, db: vdb, name, view } of views) {
    for (const ref of sourcesOf(view.query)) link(tables.get(`${ref.database ?? vdb}.${ref.name}`), id, 'to');
    if (id.startsWith('materialized_view:')) {
      // Its results go to `target_stream`, or to the stream of its own name (no INTO).
      const target = view.target_stream ?? name;
      const key = target.includes('.') && !tables.has(`${vdb}.${target}`) ? target : `${vdb}.${target}`;
      link(id, tables.get(key), 'from');
    }
  }

  for (const { record, status, target } of resources.inputs) {
    if (!inDb(target.db)) continue;
    const def = record.value;
    const id = nodeId('input', target.db, def.name);
    nodes.push({
      db: target.db,
      id,
      name: def.name,
      type: 'input',
      ownership: record.audit.created_by,
      properties: {
        input_type: def.type,
        target_stream: def.target_stream,
        listen_host: def.listen_host,
        tcp_port: def.tcp_port,
        bound_port: status?.bound_port ?? null,
        status: status?.status ?? 'failed',
        started_at: status?.started_at ?? null,
        comment: def.comment ?? '',
        ...(status?.stats ?? {}),
      },
    });
    link(id, tables.get(`${target.db}.${target.name}`), 'from');
  }

  for (const src of resources.sources ?? []) {
    if (!inDb(src.db)) continue;
    const id = nodeId('source', src.db, src.id);
    nodes.push({
      db: src.db,
      id,
      name: src.name,
      type: 'source',
      ownership: src.ownership,
      properties: { source_type: src.type, target_stream: src.stream, status: src.status },
    });
    link(id, tables.get(`${src.db}.${src.stream}`), 'from');
  }

  for (const sink of resources.sinks ?? []) {
    if (!inDb(sink.db)) continue;
    const id = nodeId('sink', sink.db, sink.id);
    nodes.push({
      db: sink.db,
      id,
      name: sink.name,
      type: 'sink',
      ownership: sink.ownership,
      properties: { sink_type: sink.type, status: sink.status },
    });
    for (const key of sink.reads) link(tables.get(key), id, 'to');
  }
  for (const d of resources.dictionaries ?? []) {
    if (!inDb(d.db)) continue;
    const id = `dictionary:${d.db}.${d.name}`;
    nodes.push({
      db: d.db,
      id,
      name: d.name,
      type: 'dictionary',
      ownership: d.ownership,
      properties: { query: d.query, description: d.description, source_type: d.sourceKind },
    });
    // The dictionary loads from the stream: data flows stream -> dictionary, which depends on it.
    if (d.stream) link(tables.get(`${d.stream.db}.${d.stream.name}`), id, 'to');
  }
  // Functions are global: shown in every database's graph. A view or materialized view calling one
  // depends on it (no data flows from a function, so no edge).
  for (const f of resources.udfs ?? []) {
    const id = `udf:${f.name}`;
    nodes.push({
      db: db ?? 'default',
      id,
      name: f.name,
      type: 'udf',
      ownership: f.ownership,
      properties: { udf_type: f.type, is_aggregation: f.is_aggregation, return_type: f.return_type },
    });
    for (const v of views)
      if (functionsOf(v.view.query).has(f.name)) dependencies.push({ source: v.id, target: id });
  }
  return { nodes, edges, dependencies };
}

/** The names of the functions a view's query calls (none when it does not parse). */
function functionsOf(query: string | undefined): Set<string> {
  if (!query) return new Set();
  try {
    const calls = findAll(parseQuery(query), (n): n is FunctionCall => n.kind === 'Function');
    return new Set(calls.map((c) => c.name));
  } catch {
    return new Set();
  }
}

function viewName(r: CatalogRecord<Partial<ViewRecord>>): { db: string; name: string } {
  if (r.value.db && r.value.name) return { db: r.value.db, name: r.value.name };
  const dot = r.key.indexOf('.');
  return dot > 0 ? { db: r.key.slice(0, dot), name: r.key.slice(dot + 1) } : { db: 'default', name: r.key };
}

/** The names a view's query reads; an unparsable query reads nothing (the node stays, without edges). */
function sourcesOf(query: string | undefined): { database?: string; name: string }[] {
  if (!query) return [];
  try {
    return tableReferences(parseQuery(query));
  } catch {
    return [];
  }
}
