import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ObjectIndexes } from '../../src/external/external-table-insert.ts';
import {
  checkKeyPattern,
  compressionFromKey,
  formatFromKey,
  newObjectKey,
  readPatternOf,
  timestampIndex,
} from '../../src/external/s3-object-keys.ts';

test('the timestamp index goes before the whole extension of the key', () => {
  const at = new Date(Date.UTC(2026, 10, 25, 17, 30, 5, 123));
  assert.equal(timestampIndex(at), '20261125173005123');
  assert.equal(newObjectKey('logs/part.json.gz', '20261125173005123'), 'logs/part.20261125173005123.json.gz');
  assert.equal(newObjectKey('a.b/part', '1'), 'a.b/part.1');
  assert.equal(newObjectKey('p/{_partition_id}/x.csv', '1'), 'p/{_partition_id}/x.1.csv');
});

test('two writes in one millisecond get successive indexes', () => {
  const idx = new ObjectIndexes();
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 999));
  assert.equal(idx.next('t', at), '20260101000000999');
  assert.equal(idx.next('t', at), '20260101000001000');
  assert.equal(idx.next('u', at), '20260101000000999');
});

test('read_from derived from write_to matches every partition and index', () => {
  assert.equal(readPatternOf('logs/{_partition_id}/part.json.gz'), 'logs/*/part*.json.gz');
  assert.equal(readPatternOf('x.csv'), 'x*.csv');
});

test('format and compression inferred from the key', () => {
  assert.equal(formatFromKey('a/b.jsonl.gz'), 'JSONEachRow');
  assert.equal(formatFromKey('a/b.tsv'), 'TSV');
  assert.equal(formatFromKey('a/b.bin'), undefined);
  assert.equal(compressionFromKey('a/b.csv.zst'), 'zstd');
  assert.equal(compressionFromKey('a/b.csv'), 'none');
});

test('read_from patterns: balanced braces and numeric ranges', () => {
  for (const ok of ['a/*.csv', 'a/**', 'a/?.csv', 'a/{x,y}.csv', 'a/{01..10}.csv'])
    assert.doesNotThrow(() => checkKeyPattern('t', 'read_from', ok));
  for (const [bad, why] of [
    ['a/{x.csv', /unclosed/],
    ['a/x}.csv', /unmatched/],
    ['a/{}.csv', /empty braces/],
    ['a/{1..x}.csv', /malformed range/],
    ['a/{5..1}.csv', /start is past its end/],
    ['/a.csv', /leading/],
  ] as const)
    assert.throws(() => checkKeyPattern('t', 'read_from', bad), why);
});
