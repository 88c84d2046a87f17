/**
 * The contract test (issue 14): every operation of the Timeplus v1beta2 OpenAPI documents
 * (shared/reference/openapi-v1beta2.json, and -with-create.json for the create routes) gets a
 * valid request, built from the operation's request schema, with fixtures for its path
 * parameters (a resource created first through the collection's own create operation), and
 * its answer is checked: a documented 2xx status and a body valid against the operation's
 * response schema (ajv). Operations not implemented yet are listed in NOT_IMPLEMENTED: one of
 * them that starts working fails the test (remove it from the list), and so does any other
 * operation that does not work. The list only shrinks.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { type Harness, startHarness } from '../helpers/harness.ts';

/** The REST contract, vendored from the shared reference so a clone anywhere runs this test. */
const contractFile = (name: string) => resolve(import.meta.dirname, '../fixtures/contract', name);

/** Operations of the documents Tributary does not answer yet (`METHOD /path` as the spec writes it). */
const NOT_IMPLEMENTED: readonly string[] = [
  'GET /v1beta2/alerts',
  'POST /v1beta2/alerts',
  'DELETE /v1beta2/alerts/{id}',
  'GET /v1beta2/alerts/{id}',
  'PUT /v1beta2/alerts/{id}',
  'POST /v1beta2/alerts/{id}/resolve',
  'POST /v1beta2/alerts/{id}/start',
  'POST /v1beta2/alerts/{id}/stop',
  'POST /v1beta2/external_tables',
  'DELETE /v1beta2/external_tables/{name}',
  'GET /v1beta2/external_tables/{name}',
  'GET /v1beta2/global-metrics',
  'POST /v1beta2/licenses',
  'POST /v1beta2/materialized_views/{name}/recover',
  'POST /v1beta2/schemas',
  'DELETE /v1beta2/schemas/{name}',
  'GET /v1beta2/schemas/{name}',
  'PUT /v1beta2/schemas/{name}',
  'GET /v1beta2/sources/{id}/logs',
  // Implemented, but a source runs from its creation and only a stopped one may change (409):
  // test/integration/sources-stream-generator.test.ts stops it first.
  'PATCH /v1beta2/sources/{id}',
  'PUT /v1beta2/sources/{id}',
  'GET /v1beta2/views/{name}/stats',
];

type Json = Record<string, unknown>;
interface OpenApiDoc {
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json> };
}
interface Operation {
  key: string;
  method: string;
  path: string;
  doc: 'base' | 'create';
  spec: Json;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const docs = {
  base: JSON.parse(readFileSync(contractFile('openapi-v1beta2.json'), 'utf8')) as OpenApiDoc,
  create: JSON.parse(readFileSync(contractFile('openapi-v1beta2-with-create.json'), 'utf8')) as OpenApiDoc,
};

/** Every operation of both documents; one the base document has is taken from it. */
function operations(): Operation[] {
  const out = new Map<string, Operation>();
  for (const doc of ['base', 'create'] as const) {
    for (const [path, item] of Object.entries(docs[doc].paths)) {
      for (const method of METHODS) {
        const spec = item[method] as Json | undefined;
        const key = `${method.toUpperCase()} ${path}`;
        if (spec && !out.has(key)) out.set(key, { key, method: method.toUpperCase(), path, doc, spec });
      }
    }
  }
  return [...out.values()];
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(docs.base, 'base');
ajv.addSchema(docs.create, 'create');

function pointer(parts: string[]): string {
  return parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
}

const compiled = new Map<string, ValidateFunction | Error>();
/** The validator of a schema at a JSON pointer of a document, or the Error compiling it raised. */
function validatorAt(doc: 'base' | 'create', parts: string[]): ValidateFunction | Error {
  const ref = `${doc}#/${pointer(parts)}`;
  let v = compiled.get(ref);
  if (!v) {
    try {
      v = ajv.compile({ $ref: ref });
    } catch (e) {
      v = e as Error;
    }
    compiled.set(ref, v);
  }
  return v;
}

/** Resolve a local `$ref` of a document. */
function deref(doc: 'base' | 'create', schema: Json | undefined): Json | undefined {
  let s = schema;
  for (let i = 0; s && typeof s.$ref === 'string' && i < 10; i++) {
    const name = (s.$ref as string).replace('#/components/schemas/', '');
    s = docs[doc].components.schemas[name];
  }
  return s;
}

let unique = 0;
/** A value for a field by its name where the name says what it holds; else undefined. */
function valueByName(name: string): unknown {
  switch (name) {
    case 'name':
    case 'username':
      return `contract_${++unique}`;
    case 'password':
      return 'contract-password-123';
    case 'sql':
    case 'query':
      return 'SELECT 1';
    default:
      return undefined;
  }
}

/** A sample value for a schema: its required properties filled, by name, enum, example or type. */
function sample(doc: 'base' | 'create', schema: Json | undefined, name = ''): unknown {
  const s = deref(doc, schema);
  if (!s) return {};
  const byName = valueByName(name);
  if (byName !== undefined && (s.type === 'string' || s.type === undefined)) return byName;
  if (Array.isArray(s.enum)) return s.enum[0];
  if (s.example !== undefined) return s.example;
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.allOf) && s.allOf.length === 1) return sample(doc, s.allOf[0] as Json, name);
  switch (s.type) {
    case 'string':
      return 'sample';
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return false;
    case 'array':
      return [];
    default: {
      const out: Json = {};
      const properties = (s.properties ?? {}) as Record<string, Json>;
      const required = new Set((s.required ?? []) as string[]);
      for (const [key, property] of Object.entries(properties)) {
        // Required properties, and optional ones whose name says what a valid value is.
        if (required.has(key) || valueByName(key) !== undefined) out[key] = sample(doc, property, key);
      }
      return out;
    }
  }
}

/**
 * What the schemas cannot say: the request parts that make a request valid for the data behind it
 * (a stream needs columns, an ingest names the stream's columns, a DDL is text).
 */
const REQUESTS: Record<string, { body?: unknown; contentType?: string; query?: string }> = {
  'POST /v1beta2/streams': { body: { columns: [{ name: 'a', type: 'int' }] } },
  'POST /v1beta2/streams/{name}/ingest': { body: { columns: ['a'], data: [[1], [2]] } },
  'POST /v1beta2/exec': { body: { sql: 'SELECT 1 AS one', type: 'historical' } },
  'POST /v1beta2/pipeline/parseddl': { body: 'CREATE STREAM parsed (a int)' },
  'POST /v1beta2/users': { body: { role: 'read_only' } },
  // A materialized view over the stream the suite creates first (contract_source).
  'POST /v1beta2/materialized_views': { body: { query: 'SELECT a FROM contract_source', target_stream: '' } },
  'PATCH /v1beta2/materialized_views/{name}': { body: { query: 'SELECT a FROM contract_source' } },
  'POST /v1beta2/materialized_views/{name}/transfer': { body: { from: 1, shard: 0, to: 1 } },
  'POST /v1beta2/sources': {
    body: { type: 'stream_generator', stream: 'contract_source_target', properties: { template: 'iot' } },
  },
  'POST /v1beta2/external_streams': {
    body: {
      columns: [{ name: 'a', type: 'int' }],
      settings: [
        { key: 'type', value: 'http' },
        { key: 'url', value: 'http://127.0.0.1:9/' },
      ],
    },
  },
  // A log external stream over the (empty) user files directory: no events, at once.
  'POST /v1beta2/external_streams/preview': {
    body: {
      settings: [
        { key: 'type', value: 'log' },
        { key: 'log_dir', value: '.' },
        { key: 'log_files', value: 'contract\\.log' },
      ],
      count: 1,
      offset: 'earliest',
      timeout: 1,
    },
  },
  // Sinks read the stream the suite creates first; the receiver's port is closed (it retries).
  'POST /v1beta2/sinks': {
    body: {
      type: 'http',
      query: 'SELECT a FROM contract_source',
      properties: { url: 'http://127.0.0.1:9/' },
    },
  },
  'PUT /v1beta2/sinks/{id}': {
    body: {
      type: 'http',
      query: 'SELECT a FROM contract_source',
      properties: { url: 'http://127.0.0.1:9/' },
    },
  },
  // A remote function: its definition does not depend on the sample's (unique) name.
  'POST /v1beta2/udfs': {
    body: {
      type: 'remote',
      url: 'http://127.0.0.1:9/',
      arguments: [{ name: 'x', type: 'string' }],
      return_type: 'string',
      auth_method: 'none',
    },
  },
  'PUT /v1beta2/udfs/{name}': {
    body: {
      type: 'remote',
      url: 'http://127.0.0.1:9/',
      arguments: [{ name: 'x', type: 'string' }],
      return_type: 'string',
      auth_method: 'none',
    },
  },
  'POST /v1beta2/source/preview': { body: { type: 'stream_generator', properties: { template: 'iot' } } },
};

function deepMerge(a: unknown, b: unknown): unknown {
  if (b === undefined) return a;
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const out: Json = { ...(a as Json) };
    for (const [k, v] of Object.entries(b as Json)) out[k] = deepMerge(out[k], v);
    return out;
  }
  return b;
}

function requestSchemaOf(op: Operation): { contentType: string; schema: Json } | undefined {
  const content = (op.spec.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
  if (!content) return undefined;
  const contentType = content['application/json'] ? 'application/json' : Object.keys(content)[0];
  if (!contentType) return undefined;
  return { contentType, schema: (content[contentType]?.schema ?? {}) as Json };
}

/** The body of a request to an operation, valid against its request schema when it has one. */
function requestBody(op: Operation): { body?: unknown; contentType?: string } {
  const requested = REQUESTS[op.key];
  const declared = requestSchemaOf(op);
  if (!declared) return requested?.body === undefined ? {} : { body: requested.body };
  const body = deepMerge(sample(op.doc, declared.schema), requested?.body);
  return { body, contentType: requested?.contentType ?? declared.contentType };
}

let h: Harness;
before(async () => {
  h = await startHarness();
  const r = await h.call('POST', '/v1beta2/streams', {
    body: { name: 'contract_source', columns: [{ name: 'a', type: 'int' }] },
  });
  assert.equal(r.statusCode, 201, r.body);
  // The target of the sources the contract's create operation makes.
  const made = await h.call('POST', '/v1beta2/queries', {
    body: {
      sql: 'CREATE STREAM contract_source_target (device string, number int32, temperature float64, humidity float64, location string)',
    },
  });
  assert.equal(made.statusCode, 204, made.body);
});
after(() => h.close());

async function call(
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<LightMyRequestResponse> {
  return h.call(method as 'GET', path, {
    ...(body === undefined ? {} : { body: typeof body === 'string' ? JSON.stringify(body) : body }),
    ...(body === undefined ? {} : { headers: { 'content-type': contentType } }),
  });
}

/** The `query` events of a server-sent-events answer. */
function sseQueryEvents(text: string): Json[] {
  const out: Json[] = [];
  for (const block of text.split('\n\n')) {
    if (!block.startsWith('event: query\n')) continue;
    out.push(JSON.parse(block.slice(block.indexOf('data: ') + 6)) as Json);
  }
  return out;
}

/** Collections the contract gives no create operation: made with SQL (a new name each time). */
const CREATED_BY_SQL: Readonly<Record<string, (name: string) => string>> = {
  '/v1beta2/dictionaries': (name) =>
    `CREATE DICTIONARY ${name} (a int32) PRIMARY KEY a SOURCE(TIMEPLUS(STREAM 'contract_source'))`,
};
let sqlMade = 0;

/** A resource made through a collection's create operation: its `param` (id or name), for a path. */
async function createIn(collection: string, param: string): Promise<string | undefined> {
  const bySql = CREATED_BY_SQL[collection];
  if (bySql) {
    const name = `contract_made_${++sqlMade}`;
    const r = await call('POST', '/v1beta2/queries', { sql: bySql(name) });
    return r.statusCode === 204 ? name : undefined;
  }
  const op = operations().find((o) => o.key === `POST ${collection}`);
  if (!op) return undefined;
  const { body, contentType } = requestBody(op);
  const r = await call('POST', collection, body, contentType);
  if (r.statusCode >= 300) return undefined;
  const made = String(r.headers['content-type']).startsWith('text/event-stream')
    ? sseQueryEvents(r.body)[0]
    : r.body
      ? (r.json() as Json)
      : (body as Json);
  const id = made?.[param] ?? made?.id ?? made?.name ?? made?.username;
  return id === undefined ? undefined : String(id);
}

/** The concrete URL of an operation: each `{param}` of a collection filled by a resource made in it. */
async function urlOf(op: Operation): Promise<string | undefined> {
  let url = op.path;
  for (const m of op.path.matchAll(/\{(\w+)\}/g)) {
    const collection = op.path.slice(0, m.index - 1);
    const id = await createIn(collection, m[1] ?? 'id');
    if (id === undefined) return undefined;
    url = url.replace(m[0], encodeURIComponent(id));
  }
  return url;
}

interface Outcome {
  works: boolean;
  why: string;
}

/** Call an operation with a valid request and judge the answer against the document. */
async function exercise(op: Operation): Promise<Outcome> {
  const url = await urlOf(op);
  if (url === undefined) return { works: false, why: 'no fixture for its path parameters' };
  const { body, contentType } = requestBody(op);
  const declared = requestSchemaOf(op);
  if (declared && body !== undefined) {
    const v = validatorAt(op.doc, [
      'paths',
      op.path,
      op.method.toLowerCase(),
      'requestBody',
      'content',
      declared.contentType,
      'schema',
    ]);
    if (typeof v === 'function')
      assert.ok(v(body), `the sample request of ${op.key} is valid: ${ajv.errorsText(v.errors)}`);
  }
  const r = await call(op.method, url, body, contentType);
  // Whatever the answer, it carries the request's id.
  assert.match(String(r.headers['x-request-id']), /^[0-9a-f-]{36}$/, `${op.key}: x-request-id`);
  const responses = op.spec.responses as Record<string, Json>;
  const documented = responses[String(r.statusCode)];
  if (r.statusCode >= 300 || !documented) {
    return {
      works: false,
      why: `${r.statusCode} (documented 2xx: ${Object.keys(responses)
        .filter((s) => s.startsWith('2'))
        .join(', ')}) ${r.body.slice(0, 300)}`,
    };
  }
  const content = (documented.content ?? {}) as Record<string, Json>;
  const type = String(r.headers['content-type'] ?? '').split(';')[0] ?? '';
  if (Object.keys(content).length === 0) return { works: true, why: '' };
  const schemaType = content[type] ? type : undefined;
  if (!schemaType)
    return {
      works: false,
      why: `answered ${type || 'no content type'}, documented ${Object.keys(content).join(', ')}`,
    };
  const bodies = type === 'text/event-stream' ? sseQueryEvents(r.body) : [r.json()];
  if (bodies.length === 0) return { works: false, why: 'an event stream without a query event' };
  const v = validatorAt(op.doc, [
    'paths',
    op.path,
    op.method.toLowerCase(),
    'responses',
    String(r.statusCode),
    'content',
    type,
    'schema',
  ]);
  if (v instanceof Error)
    return { works: false, why: `the document's schema does not compile: ${v.message}` };
  for (const b of bodies) {
    if (!v(b))
      return { works: false, why: `the answer does not match its schema: ${ajv.errorsText(v.errors)}` };
  }
  return { works: true, why: '' };
}

test('the schemas judge: a wrong answer fails its schema (sanity)', () => {
  const stream = validatorAt('base', ['components', 'schemas', 'Stream']);
  assert.ok(typeof stream === 'function');
  assert.equal(stream({ name: 'ok', columns: [] }), false);
  assert.ok(
    stream.errors?.some((e) => e.keyword === 'required'),
    'a Stream without its required fields',
  );
  assert.equal(stream({ name: 42 }), false);
  assert.ok(stream.errors?.some((e) => e.instancePath === '/name' && e.keyword === 'type'));
});

test('the documents list the operations of the contract (sanity)', () => {
  const keys = operations().map((o) => o.key);
  assert.ok(keys.length > 100, `${keys.length} operations`);
  for (const key of NOT_IMPLEMENTED) assert.ok(keys.includes(key), `${key} is an operation of the documents`);
});

for (const op of operations()) {
  test(op.key, async () => {
    const outcome = await exercise(op);
    if (NOT_IMPLEMENTED.includes(op.key)) {
      assert.equal(outcome.works, false, `${op.key} works now: remove it from NOT_IMPLEMENTED`);
    } else {
      assert.ok(outcome.works, `${op.key}: ${outcome.why}`);
    }
  });
}
