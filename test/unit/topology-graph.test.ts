// buildTopology: streams, views, materialized views and inputs as nodes; data flow as edges;
// "depends on" as dependencies; the db filter.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTopology, type TopologyResources } from '../../src/api/topology-graph.ts';
import { newAudit } from '../../src/catalog/audit.ts';
import type { CatalogRecord } from '../../src/catalog/catalog.ts';
import { validateInputSettings } from '../../src/connectors/inputs/input-definition.ts';
import type { InputStatus } from '../../src/connectors/inputs/running-inputs.ts';
import type { StreamDefinition } from '../../src/stream/stream-definition.ts';
import type { ViewRecord } from '../../src/streaming/catalog-resolver.ts';

const alice = { id: 'alice', name: 'alice' };

function rec<T>(kind: string, key: string, value: T): CatalogRecord<T> {
  return { kind, key, value, audit: newAudit(alice) };
}

function stream(db: string, name: string): CatalogRecord<StreamDefinition> {
  return rec('stream', `${db}.${name}`, {
    db,
    name,
    mode: 'append',
    storageType: 'hybrid',
    description: `${name} stream`,
  } as unknown as StreamDefinition);
}

function view(db: string, name: string, query: string, extra: Partial<ViewRecord> = {}) {
  return rec<Partial<ViewRecord>>('view', `${db}.${name}`, {
    db,
    name,
    query,
    materialized: false,
    ...extra,
  });
}

const def = validateInputSettings('logs_in', {
  type: 'elastic',
  target_stream: 'logs',
  tcp_port: 9200,
  username: 'u',
  password: 'secret-pw',
});
const status: InputStatus = {
  name: 'logs_in',
  type: 'elastic',
  target_stream: 'logs',
  listen_host: '0.0.0.0',
  tcp_port: 9200,
  bound_port: 9200,
  status: 'running',
  started_at: '2026-01-01T00:00:00.000Z',
  comment: null,
  stats: {
    docs_accepted: 10,
    docs_rejected: 1,
    bytes_received: 999,
    requests: 3,
    bulk_requests: 2,
    failed_requests: 0,
    last_error: null,
  },
};

const resources: TopologyResources = {
  streams: [stream('default', 'logs'), stream('default', 'errors'), stream('other', 'metrics')],
  views: [
    view('default', 'warn_logs', "SELECT * FROM logs WHERE json_value(_raw, '$.level') = 'warn'"),
    view('default', 'error_mv', 'WITH w AS (SELECT * FROM warn_logs) SELECT * FROM w', {
      materialized: true,
      target_stream: 'errors',
    }),
    view('default', 'joined', 'SELECT * FROM tumble(logs, 5s) JOIN other.metrics USING (x)'),
    view('default', 'broken', 'SELECT FROM FROM'),
  ],
  inputs: [{ record: rec('input', 'logs_in', def), status, target: { db: 'default', name: 'logs' } }],
};

test('nodes of every kind, with owner and properties; no credentials', () => {
  const t = buildTopology(resources);
  assert.deepEqual(
    t.nodes.map((n) => [n.id, n.type, n.db, n.name]),
    [
      ['stream:default.logs', 'stream', 'default', 'logs'],
      ['stream:default.errors', 'stream', 'default', 'errors'],
      ['stream:other.metrics', 'stream', 'other', 'metrics'],
      ['view:default.warn_logs', 'view', 'default', 'warn_logs'],
      ['materialized_view:default.error_mv', 'materialized_view', 'default', 'error_mv'],
      ['view:default.joined', 'view', 'default', 'joined'],
      ['view:default.broken', 'view', 'default', 'broken'],
      ['input:logs_in', 'input', 'default', 'logs_in'],
    ],
  );
  assert.ok(t.nodes.every((n) => n.ownership.name === 'alice'));
  const input = t.nodes.find((n) => n.type === 'input')!;
  assert.equal(input.properties.docs_accepted, 10);
  assert.equal(input.properties.bound_port, 9200);
  assert.equal(input.properties.status, 'running');
  assert.ok(!JSON.stringify(t).includes('secret-pw'));
  assert.equal(t.nodes[0]!.properties.mode, 'append');
});

test('edges follow the data; dependencies point at what a node needs', () => {
  const t = buildTopology(resources);
  assert.deepEqual(t.edges, [
    { source: 'stream:default.logs', target: 'view:default.warn_logs' },
    { source: 'view:default.warn_logs', target: 'materialized_view:default.error_mv' },
    { source: 'materialized_view:default.error_mv', target: 'stream:default.errors' },
    { source: 'stream:default.logs', target: 'view:default.joined' },
    { source: 'stream:other.metrics', target: 'view:default.joined' },
    { source: 'input:logs_in', target: 'stream:default.logs' },
  ]);
  assert.deepEqual(t.dependencies, [
    { source: 'view:default.warn_logs', target: 'stream:default.logs' },
    { source: 'materialized_view:default.error_mv', target: 'view:default.warn_logs' },
    { source: 'materialized_view:default.error_mv', target: 'stream:default.errors' },
    { source: 'view:default.joined', target: 'stream:default.logs' },
    { source: 'view:default.joined', target: 'stream:other.metrics' },
    { source: 'input:logs_in', target: 'stream:default.logs' },
  ]);
});

test('db keeps one database; links to other databases are left out', () => {
  const t = buildTopology(resources, 'other');
  assert.deepEqual(
    t.nodes.map((n) => n.id),
    ['stream:other.metrics'],
  );
  assert.deepEqual(t.edges, []);
  const d = buildTopology(resources, 'default');
  assert.ok(!d.nodes.some((n) => n.db !== 'default'));
  assert.ok(!d.edges.some((e) => e.source === 'stream:other.metrics'));
  assert.ok(d.nodes.some((n) => n.id === 'input:logs_in'));
});

test('sources are nodes with an edge to their stream; random streams are typed random_stream', () => {
  const g = buildTopology(
    {
      streams: [stream('default', 'rnd'), stream('default', 'iot')],
      randomStreams: new Set(['default.rnd']),
      views: [view('default', 'over_rnd', 'SELECT * FROM rnd')],
      inputs: [],
      sources: [
        {
          id: 's1',
          name: 'gen',
          type: 'stream_generator',
          db: 'default',
          stream: 'iot',
          status: 'running',
          ownership: alice,
        },
        {
          id: 's2',
          name: 'other',
          type: 'nats',
          db: 'other',
          stream: 'x',
          status: 'stopped',
          ownership: alice,
        },
      ],
    },
    'default',
  );
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  assert.equal(byId.get('stream:default.rnd')?.type, 'random_stream');
  assert.equal(byId.get('stream:default.iot')?.type, 'stream');
  assert.deepEqual(byId.get('source:s1')?.properties, {
    source_type: 'stream_generator',
    target_stream: 'iot',
    status: 'running',
  });
  assert.equal(byId.has('source:s2'), false, 'another database');
  assert.ok(g.edges.some((e) => e.source === 'source:s1' && e.target === 'stream:default.iot'));
  assert.ok(g.dependencies.some((e) => e.source === 'source:s1' && e.target === 'stream:default.iot'));
  assert.ok(g.edges.some((e) => e.source === 'stream:default.rnd' && e.target === 'view:default.over_rnd'));
});
