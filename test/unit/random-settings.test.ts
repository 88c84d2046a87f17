/** Settings of CREATE RANDOM STREAM (Proton's StorageRandom rules) and the historical batch size. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TributaryError } from '../../src/errors/tributary-error.ts';
import { historicalBatchSize, RANDOM_DEFAULTS, randomSettings } from '../../src/random/random-settings.ts';

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e instanceof TributaryError ? e.code : -1;
  }
  return 0;
};

test('defaults: eps 1000, interval_time 100 ms, one shard', () => {
  assert.deepEqual(randomSettings({}), RANDOM_DEFAULTS);
  assert.deepEqual(randomSettings({ eps: 10, interval_time: 200, shards: 3 }), {
    eps: 10,
    intervalTimeMs: 200,
    shards: 3,
  });
  assert.equal(randomSettings({ EPS: '0.5' }).eps, 0.5);
  assert.equal(randomSettings({ eps: 0.000001 }).eps, 0, 'below 0.00001 is 0 (unlimited)');
});

test('interval_time outside 1..1000, a negative eps, bad shards: 471 naming the setting; an unknown setting: 115', () => {
  assert.equal(
    code(() => randomSettings({ interval_time: 0 })),
    471,
  );
  assert.equal(
    code(() => randomSettings({ interval_time: 15000 })),
    471,
  );
  assert.equal(
    code(() => randomSettings({ interval_time: 1.5 })),
    471,
  );
  assert.equal(
    code(() => randomSettings({ eps: -1 })),
    471,
  );
  assert.equal(
    code(() => randomSettings({ eps: 'many' })),
    471,
  );
  assert.equal(
    code(() => randomSettings({ shards: 0 })),
    471,
  );
  assert.equal(
    code(() => randomSettings({ mode: 'append' })),
    115,
  );
});

test('a historical read answers max_events rows, else eps, else 65536', () => {
  assert.equal(historicalBatchSize(RANDOM_DEFAULTS), 1000);
  assert.equal(historicalBatchSize(RANDOM_DEFAULTS, 37), 37);
  assert.equal(historicalBatchSize({ ...RANDOM_DEFAULTS, eps: 0.5 }), 1);
  assert.equal(historicalBatchSize({ ...RANDOM_DEFAULTS, eps: 0 }), 65536);
});

test('random_in_type maps to engine calls for every type of Proton suite 0021', async () => {
  const { translateExpression } = await import('../../src/sql/index.ts');
  for (const t of [
    'bool',
    'int8',
    'int256',
    'uint64',
    'string',
    'fixed_string(3)',
    'date',
    'date32',
    'datetime32',
    'datetime64(3)',
    'float32',
    'decimal32(3)',
    'decimal(9,4)',
    'uuid',
    'ipv4',
    'ipv6',
  ]) {
    const sql = translateExpression(`random_in_type('${t}')`);
    assert.doesNotMatch(sql, /random_in_type/, `${t}: ${sql}`);
  }
  assert.match(translateExpression("random_in_type('uint8', 5, x -> to_uint8(x + 10))"), /arrayMap/);
  assert.match(translateExpression("random_in_type('int8', 5)"), /modulo\(rand64\(\d+\), 5\)/);
});
