/**
 * The emit of a global aggregation over a nested global aggregation (emit-policy.ts,
 * followsNestedAggregation): without its own EMIT PERIODIC / ON UPDATE and without GROUP BY it
 * emits when its input changes; otherwise its policy is kept.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EmitClause, SelectQuery } from '../../src/sql/ast/query.ts';
import { parseQuery } from '../../src/sql/parser/parse.ts';
import { followsNestedAggregation, resolveEmitPolicy } from '../../src/streaming/emit-policy.ts';

const emitOf = (clause: string) =>
  (parseQuery(`SELECT count() FROM s ${clause}`) as SelectQuery).emit as EmitClause;

const nestedGlobal = [{ program: { shape: 'global' } }];
const nestedWindow = [{ program: { shape: 'window' } }];

test('no EMIT and no GROUP BY over a nested global aggregation: on update, no timer of its own', () => {
  const policy = followsNestedAggregation(
    resolveEmitPolicy(undefined, 'global'),
    undefined,
    nestedGlobal,
    false,
  );
  assert.deepEqual(policy, { shape: 'global', onUpdate: true, changelog: false });
});

test('EMIT CHANGELOG alone keeps the changelog and follows the nested aggregation too', () => {
  const emit = emitOf('EMIT CHANGELOG');
  const policy = followsNestedAggregation(resolveEmitPolicy(emit, 'global'), emit, nestedGlobal, false);
  assert.deepEqual(policy, { shape: 'global', onUpdate: true, changelog: true });
});

test('the policy is kept: a written EMIT PERIODIC, a GROUP BY, a windowed or no nested aggregation', () => {
  const periodic = emitOf('EMIT PERIODIC 1s');
  const written = resolveEmitPolicy(periodic, 'global');
  assert.deepEqual(followsNestedAggregation(written, periodic, nestedGlobal, false), written);
  const byDefault = resolveEmitPolicy(undefined, 'global');
  assert.deepEqual(followsNestedAggregation(byDefault, undefined, nestedGlobal, true), byDefault);
  assert.deepEqual(followsNestedAggregation(byDefault, undefined, nestedWindow, false), byDefault);
  assert.deepEqual(followsNestedAggregation(byDefault, undefined, [], false), byDefault);
});
