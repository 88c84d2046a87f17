import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TributaryError } from '../../src/errors/tributary-error.ts';
import { resolveIngestFormat } from '../../src/stream/ingest-format.ts';

const CASES: Array<[string | undefined, string]> = [
  [undefined, 'compact'],
  ['', 'compact'],
  ['application/json', 'compact'],
  ['application/json;format=compact', 'compact'],
  ['application/json;format=compat', 'compact'],
  ['application/json; charset=utf-8', 'compact'],
  ['Application/JSON; Format=Compact', 'compact'],
  ['application/vnd.timeplus+json', 'compact'],
  ['application/vnd.timeplus+json;format=compat', 'compact'],
  ['application/vnd.acme+json;format=compact', 'compact'],
  ['application/json;format=streaming', 'streaming'],
  ['application/json;format=stream', 'streaming'],
  ['application/vnd.timeplus+json;format=streaming', 'streaming'],
  ['application/vnd.timeplus+json;format=stream', 'streaming'],
  ['application/x-ndjson', 'streaming'],
  ['application/x-ndjson; charset=UTF-8', 'streaming'],
  ['application/jsonl', 'streaming'],
  ['text/plain', 'raw'],
  ['text/plain;format=raw', 'raw'],
  ['text/plain; charset=utf-8', 'raw'],
  ['text/plain;format=lines', 'lines'],
  ['text/plain; format="lines"; charset=utf-8', 'lines'],
];

test('every Content-Type spelling of the contract picks its format', () => {
  for (const [ct, format] of CASES)
    assert.equal(resolveIngestFormat(ct, undefined).format, format, String(ct));
});

test('?format= overrides the Content-Type', () => {
  assert.equal(resolveIngestFormat('application/json', 'streaming').format, 'streaming');
  assert.equal(resolveIngestFormat('application/json', 'raw').format, 'raw');
  assert.equal(resolveIngestFormat('text/plain', 'lines').format, 'lines');
  assert.equal(resolveIngestFormat('text/plain', 'compact').format, 'compact');
  assert.equal(resolveIngestFormat(undefined, 'stream').format, 'streaming');
});

test('a charset parameter is carried; an unknown one is refused', () => {
  assert.equal(resolveIngestFormat('text/plain; charset=ISO-8859-1', undefined).charset, 'iso-8859-1');
  assert.equal(resolveIngestFormat('application/json', undefined).charset, 'utf-8');
  assert.throws(
    () => resolveIngestFormat('text/plain; charset=klingon', undefined),
    (e: unknown) => {
      assert.ok(e instanceof TributaryError);
      assert.equal(e.errorName, 'UNSUPPORTED_MEDIA_TYPE');
      return true;
    },
  );
});

test('unsupported Content-Types and format values are refused', () => {
  for (const ct of [
    'application/xml',
    'text/csv',
    'application/json;format=lines',
    'text/plain;format=compact',
    'application/x-ndjson;format=raw',
  ]) {
    assert.throws(
      () => resolveIngestFormat(ct, undefined),
      (e: unknown) =>
        e instanceof TributaryError && e.errorName === 'UNSUPPORTED_MEDIA_TYPE' && e.status === 415,
      ct,
    );
  }
  assert.throws(
    () => resolveIngestFormat('application/json', 'csv'),
    (e: unknown) =>
      e instanceof TributaryError && e.errorName === 'INVALID_FIELD' && /format/.test(e.message),
  );
});

test('a remembered resolution answers the same as a fresh one; refusals are not remembered', () => {
  const first = resolveIngestFormat('application/x-ndjson; charset=latin1', undefined);
  assert.deepEqual(first, { format: 'streaming', charset: 'latin1' });
  const again = resolveIngestFormat('application/x-ndjson; charset=latin1', undefined);
  assert.deepEqual(again, first);
  assert.ok(Object.isFrozen(again), 'a shared answer cannot be changed by a caller');
  // The same header with a ?format= override is another question.
  assert.deepEqual(resolveIngestFormat('application/x-ndjson; charset=latin1', 'raw'), {
    format: 'raw',
    charset: 'latin1',
  });
  for (let i = 0; i < 2; i++) {
    assert.throws(
      () => resolveIngestFormat('application/json; charset=no-such-charset', undefined),
      (e: unknown) => e instanceof TributaryError && e.errorName === 'UNSUPPORTED_MEDIA_TYPE',
    );
    assert.throws(
      () => resolveIngestFormat('application/json', 'csv'),
      (e: unknown) => e instanceof TributaryError && e.errorName === 'INVALID_FIELD',
    );
  }
  // Many distinct headers: the memory stays bounded and answers stay right.
  for (let i = 0; i < 1000; i++)
    assert.equal(resolveIngestFormat(`application/vnd.v${i}+json`, undefined).format, 'compact');
  assert.deepEqual(resolveIngestFormat('application/x-ndjson; charset=latin1', undefined), first);
});
