import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stripOptionalNulls } from '../../src/api/optional-nulls.ts';

const SCHEMA = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    note: { type: ['string', 'null'] },
    legacy: { type: 'string', nullable: true },
    policy: {
      type: 'object',
      required: ['count'],
      properties: { count: { type: 'integer' }, time_ms: { type: 'integer' } },
    },
    columns: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type'],
        properties: { type: { type: 'string' }, codec: { type: 'string' } },
      },
    },
  },
};

test('optional nulls are removed at any depth; required and nullable ones stay', () => {
  const body = {
    name: null,
    description: null,
    note: null,
    legacy: null,
    unknown: null,
    policy: { count: null, time_ms: null },
    columns: [
      { type: null, codec: null },
      { type: 'int', codec: 'ZSTD' },
    ],
  };
  stripOptionalNulls(body, SCHEMA);
  assert.deepEqual(body, {
    name: null,
    note: null,
    legacy: null,
    unknown: null,
    policy: { count: null },
    columns: [{ type: null }, { type: 'int', codec: 'ZSTD' }],
  });
});

test('values that are not objects, and bodies without a schema, are left as they are', () => {
  const text = 'CREATE STREAM s (a int)';
  stripOptionalNulls(text, SCHEMA);
  const body = { description: null };
  stripOptionalNulls(body, undefined);
  assert.deepEqual(body, { description: null });
});
