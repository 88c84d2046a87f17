import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isTributaryError } from '../../src/errors/tributary-error.ts';
import { udfDefinition } from '../../src/udf/udf-definition.ts';

const scalar = {
  name: 'add_one',
  type: 'javascript',
  arguments: [{ name: 'x', type: 'float64' }],
  return_type: 'float64',
  source: 'function add_one(x) { return x.map((v) => v + 1); }',
};

function refused(input: Record<string, unknown>, code: number, message: RegExp): void {
  assert.throws(
    () => udfDefinition(input as never),
    (e: unknown) => isTributaryError(e) && e.code === code && message.test(e.message),
  );
}

test('a JavaScript definition is checked and kept with its defaults', () => {
  assert.deepEqual(udfDefinition(scalar), {
    ...scalar,
    is_aggregation: false,
    description: '',
    execution_timeout: 10000,
  });
  const agg = udfDefinition({
    ...scalar,
    name: 'emits',
    is_aggregation: true,
    source:
      '{ has_customized_emit: true, initialize() {}, process(v) { return 1; }, finalize() { return []; } }',
  });
  assert.equal(agg.customized_emit, true);
});

test('bad definitions are refused with the field and the reason', () => {
  refused({ ...scalar, source: 'function add_one(x) { return x + ; }' }, 36, /does not parse/);
  refused({ ...scalar, source: 'function other(x) { return x; }' }, 36, /named add_one/);
  refused({ ...scalar, name: '1x' }, 36, /letters, digits/);
  refused({ ...scalar, name: '__trb_uda_x' }, 36, /reserved/);
  refused({ ...scalar, name: 'sum' }, 609, /built-in/);
  refused({ ...scalar, name: 'lag' }, 609, /built-in/);
  refused({ ...scalar, return_type: 'float99' }, 50, /float99/);
  refused(
    {
      ...scalar,
      arguments: [
        { name: 'x', type: 'int' },
        { name: 'x', type: 'int' },
      ],
    },
    36,
    /twice/,
  );
  refused({ ...scalar, execution_timeout: 0 }, 36, /execution_timeout/);
  refused({ ...scalar, type: 'lua' }, 36, /'javascript', 'remote' or 'sql'/);
});

test('a remote definition: URL, auth method, header name; the key is kept for the process', () => {
  const remote = udfDefinition({
    name: 'lookup',
    type: 'remote',
    arguments: [{ name: 'ip', type: 'string' }],
    return_type: 'string',
    url: 'https://example.com/lookup',
    auth_method: 'auth_header',
    auth_context: { key_name: 'x-key', key_value: 'secret' },
  });
  assert.equal(remote.auth_header, 'x-key');
  assert.equal(remote.auth_key, 'secret');
  const base = { name: 'r', type: 'remote', arguments: [], return_type: 'string' };
  refused({ ...base, url: 'file:///etc/passwd' }, 36, /http or https/);
  refused({ ...base, url: 'not a url' }, 36, /http\(s\) URL/);
  refused({ ...base, url: 'http://x/', auth_method: 'auth_header' }, 36, /key_name/);
  refused({ ...base, url: 'http://x/', auth_method: 'basic' }, 36, /auth_method/);
  refused({ ...base, url: 'http://x/', is_aggregation: true }, 36, /cannot be an aggregation/);
});

test('a SQL function: its lambda checked, its parameters its arguments', () => {
  const def = udfDefinition({ name: 'twice', type: 'sql', return_type: '', source: ' (x) -> x * 2 ' });
  assert.equal(def.type, 'sql');
  assert.equal(def.source, '(x) -> x * 2');
  assert.deepEqual(def.arguments, [{ name: 'x', type: '' }]);
  const refusedSql = (source: string, code: number, message: RegExp) =>
    assert.throws(
      () => udfDefinition({ name: 'f', type: 'sql', return_type: '', source }),
      (e: unknown) => isTributaryError(e) && e.code === code && message.test(e.message),
    );
  refusedSql('1 + 2', 36, /must be a lambda/);
  refusedSql('(x, x) -> x', 36, /named twice/);
  refusedSql('(x) -> sum(x)', 48, /calls the aggregate sum/);
});
