import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BasicAuthCheck, WWW_AUTHENTICATE } from '../../src/connectors/inputs/elastic/basic-auth.ts';
import { ClusterInfo } from '../../src/connectors/inputs/elastic/cluster-info.ts';
import { DocumentIds } from '../../src/connectors/inputs/elastic/document-ids.ts';
import { EsRequestError } from '../../src/connectors/inputs/elastic/es-error.ts';
import { type EsRoute, routeEsRequest } from '../../src/connectors/inputs/elastic/es-routes.ts';

const info = new ClusterInfo('logs_in', '8.17.0');

function route(method: string, path: string): EsRoute {
  const segments = path.split('?')[0]!.split('/').filter(Boolean).map(decodeURIComponent);
  return routeEsRequest(method, path, segments, info, () => '127.0.0.1:9200');
}

function body(method: string, path: string): unknown {
  const r = route(method, path);
  assert.equal(r.kind, 'answer', `${method} ${path}`);
  return (r as { body: unknown }).body;
}

function refused(method: string, path: string, status: number) {
  assert.throws(
    () => route(method, path),
    (e: unknown) => e instanceof EsRequestError && e.status === status,
    `${method} ${path}`,
  );
}

describe('routes', () => {
  test('bulk on /_bulk, /{index}/_bulk and /{index}/{type}/_bulk, POST and PUT', () => {
    assert.deepEqual(route('POST', '/_bulk'), { kind: 'bulk', pathIndex: undefined });
    assert.deepEqual(route('PUT', '/_bulk/'), { kind: 'bulk', pathIndex: undefined });
    assert.deepEqual(route('POST', '/logs/_bulk'), { kind: 'bulk', pathIndex: 'logs' });
    assert.deepEqual(route('POST', '/logs/_doc/_bulk'), { kind: 'bulk', pathIndex: 'logs' });
    assert.deepEqual(route('POST', '/%3Clogs-%7Bnow%2Fd%7D%3E/_bulk'), {
      kind: 'bulk',
      pathIndex: '<logs-{now/d}>',
    });
    refused('GET', '/_bulk', 405);
    assert.throws(
      () => route('DELETE', '/x/_bulk'),
      (e: unknown) => e instanceof EsRequestError && e.headers.allow === 'POST, PUT',
    );
  });

  test('GET and HEAD / answer the cluster info with the configured version', () => {
    const root = body('GET', '/') as {
      version: { number: string; build_flavor: string };
      tagline: string;
      cluster_uuid: string;
    };
    assert.equal(root.version.number, '8.17.0');
    assert.equal(root.version.build_flavor, 'default');
    assert.equal(root.tagline, 'You Know, for Search');
    assert.equal(
      root.cluster_uuid,
      new ClusterInfo('logs_in', '8.17.0').clusterUuid,
      'stable across restarts',
    );
    assert.notEqual(root.cluster_uuid, new ClusterInfo('other', '8.17.0').clusterUuid);
    assert.equal(route('HEAD', '/').kind, 'answer');
    refused('POST', '/', 405);
  });

  test('license, xpack, cluster health, nodes', () => {
    const lic = body('GET', '/_license?human=false') as { license: { status: string; type: string } };
    assert.deepEqual([lic.license.status, lic.license.type], ['active', 'basic']);
    assert.equal((body('GET', '/_xpack') as { license: { status: string } }).license.status, 'active');
    assert.equal((body('GET', '/_cluster/health') as { status: string }).status, 'green');
    assert.equal(
      (body('GET', '/_cluster/health/logs?wait_for_status=yellow') as { status: string }).status,
      'green',
    );
    const nodes = body('GET', '/_nodes/http') as {
      nodes: Record<string, { http: { publish_address: string } }>;
    };
    assert.deepEqual(
      Object.values(nodes.nodes).map((n) => n.http.publish_address),
      ['127.0.0.1:9200'],
    );
    assert.ok(body('GET', '/_nodes/_all/http'));
  });

  test('templates, ILM policies, pipelines, data streams and aliases exist and writes are acknowledged', () => {
    for (const path of [
      '/_index_template/filebeat-8.17.0',
      '/_template/logstash',
      '/_component_template/c',
      '/_ilm/policy/filebeat',
      '/_ilm/policy',
      '/_ingest/pipeline/p',
      '/_data_stream/logs-generic-default',
      '/_alias/a',
      '/_alias',
      '/logs/_alias/a',
    ]) {
      assert.deepEqual(body('HEAD', path), {}, `HEAD ${path}`);
      assert.deepEqual(body('GET', path), {}, `GET ${path}`);
      assert.deepEqual(body('PUT', path), { acknowledged: true }, `PUT ${path}`);
    }
    assert.deepEqual(body('POST', '/_aliases'), { acknowledged: true });
  });

  test('HEAD and PUT /{index}', () => {
    assert.equal(route('HEAD', '/logstash').kind, 'answer');
    assert.deepEqual(body('PUT', '/%3Clogstash-%7Bnow%2Fd%7D-000001%3E'), {
      acknowledged: true,
      shards_acknowledged: true,
      index: '<logstash-{now/d}-000001>',
    });
  });

  test('anything else is an ES-style 404', () => {
    refused('GET', '/_search', 404);
    refused('POST', '/logs/_doc', 404);
    refused('GET', '/_cat/indices', 404);
  });
});

describe('basic auth', () => {
  const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

  test('without credentials configured, anything passes', () => {
    const a = new BasicAuthCheck(undefined, undefined);
    assert.equal(a.enabled, false);
    a.check(undefined, '/');
    a.check(basic('x', 'y'), '/');
    a.check('ApiKey abc', '/');
  });

  test('with credentials, the right Basic header passes (any case of the scheme)', () => {
    const a = new BasicAuthCheck('timeplus', 'pa:ss wörd');
    a.check(basic('timeplus', 'pa:ss wörd'), '/_bulk');
    a.check(basic('timeplus', 'pa:ss wörd').replace('Basic', 'basic'), '/_bulk');
  });

  test('missing, wrong or non-Basic credentials get a 401 security_exception with WWW-Authenticate', () => {
    const a = new BasicAuthCheck('u', 'p');
    const cases: Array<[string | undefined, RegExp]> = [
      [undefined, /missing authentication credentials for REST request \[\/_bulk\]/],
      [basic('u', 'wrong'), /unable to authenticate user \[u\] for REST request \[\/_bulk\]/],
      [basic('other', 'p'), /unable to authenticate user \[other\]/],
      [basic('u', 'p2'), /unable to authenticate user \[u\]/],
      ['ApiKey abc', /unable to authenticate with provided credentials/],
      ['Basic', /unable to authenticate/],
    ];
    for (const [header, reason] of cases) {
      assert.throws(
        () => a.check(header, '/_bulk'),
        (e: unknown) =>
          e instanceof EsRequestError &&
          e.status === 401 &&
          e.type === 'security_exception' &&
          reason.test(e.reason) &&
          e.headers['www-authenticate'] === WWW_AUTHENTICATE,
        String(header),
      );
    }
  });

  test('the 401 body has the Elasticsearch error shape', () => {
    const e = new EsRequestError(401, 'security_exception', 'nope');
    assert.deepEqual(JSON.parse(e.body()), {
      error: {
        root_cause: [{ type: 'security_exception', reason: 'nope' }],
        type: 'security_exception',
        reason: 'nope',
      },
      status: 401,
    });
  });
});

describe('document ids', () => {
  test('20 URL-safe characters, unique within and across generators, across a counter wrap', () => {
    const a = new DocumentIds();
    const b = new DocumentIds();
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = a.next();
      assert.match(id, /^[A-Za-z0-9_-]{20}$/);
      seen.add(id);
      seen.add(b.next());
    }
    assert.equal(seen.size, 40_000);
    // Force the 24-bit counter to wrap within one millisecond.
    const c = new DocumentIds();
    c.refresh(1_000);
    (c as unknown as { counter: number }).counter = 0xfffffe;
    const ids = [c.next(), c.next(), c.next()];
    c.refresh(1_000);
    ids.push(c.next());
    assert.equal(new Set(ids).size, 4);
  });
});
