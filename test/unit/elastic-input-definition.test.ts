import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ELASTIC_INPUT_DEFAULTS,
  elasticInputSettings,
  validateElasticInputSettings,
} from '../../src/connectors/inputs/elastic/elastic-input-definition.ts';
import { showCreateElasticInput } from '../../src/connectors/inputs/elastic/show-create-elastic-input.ts';
import { showCreateInput, validateInputSettings } from '../../src/connectors/inputs/input-definition.ts';
import { isTributaryError } from '../../src/errors/tributary-error.ts';

function fails(f: () => unknown, name: string, pattern: RegExp) {
  assert.throws(f, (e: unknown) => {
    assert.ok(isTributaryError(e), String(e));
    assert.equal(e.errorName, name, e.message);
    assert.match(e.message, pattern);
    assert.equal(e.status, 400);
    return true;
  });
}

test('defaults: port 9997, host 0.0.0.0, version 8.17.0, 100 MiB bodies, no auth', () => {
  const d = validateElasticInputSettings('logs_in', { type: 'elastic', target_stream: 'logs' });
  assert.deepEqual(d, {
    name: 'logs_in',
    type: 'elastic',
    target_stream: 'logs',
    tcp_port: 9997,
    listen_host: '0.0.0.0',
    es_version: '8.17.0',
    max_body_bytes: 104857600,
  });
  assert.equal(ELASTIC_INPUT_DEFAULTS.max_body_bytes, 100 * 1024 * 1024);
});

test('every setting given, names case-insensitive, numbers given as strings accepted', () => {
  const d = validateElasticInputSettings(
    'logs_in',
    {
      TYPE: 'elastic',
      target_stream: 'logs',
      tcp_port: '9200',
      listen_host: '127.0.0.1',
      username: 'timeplus',
      password: 'timeplus_password',
      es_version: '7.17.3',
      max_body_bytes: 1048576,
    },
    'from filebeat',
  );
  assert.equal(d.tcp_port, 9200);
  assert.equal(d.username, 'timeplus');
  assert.equal(d.password, 'timeplus_password');
  assert.equal(d.es_version, '7.17.3');
  assert.equal(d.max_body_bytes, 1048576);
  assert.equal(d.comment, 'from filebeat');
  assert.deepEqual(validateElasticInputSettings('logs_in', elasticInputSettings(d), d.comment), d);
});

test('bad settings are catalogue errors that name the setting', () => {
  const base = { type: 'elastic', target_stream: 'logs' };
  fails(
    () => validateElasticInputSettings('i', { type: 'elastic' }),
    'INPUT_MISSING_SETTING',
    /setting target_stream is required/,
  );
  fails(
    () => validateElasticInputSettings('i', { target_stream: 'x' }),
    'INPUT_MISSING_SETTING',
    /setting type is required/,
  );
  fails(
    () => validateElasticInputSettings('i', { ...base, target_stream: ' ' }),
    'INPUT_BAD_SETTING',
    /target_stream must not be empty/,
  );
  fails(
    () => validateElasticInputSettings('i', { ...base, target_stream: 3 }),
    'INPUT_BAD_SETTING',
    /target_stream must be a string/,
  );
  for (const port of [-1, 65536, 1.5, 'abc', true])
    fails(
      () => validateElasticInputSettings('i', { ...base, tcp_port: port }),
      'INPUT_BAD_SETTING',
      /tcp_port must be an integer from 0 to 65535/,
    );
  fails(
    () => validateElasticInputSettings('i', { ...base, listen_host: '' }),
    'INPUT_BAD_SETTING',
    /listen_host must not be empty/,
  );
  fails(
    () => validateElasticInputSettings('i', { ...base, username: 'u' }),
    'INPUT_MISSING_SETTING',
    /setting password is required/,
  );
  fails(
    () => validateElasticInputSettings('i', { ...base, password: 'p' }),
    'INPUT_MISSING_SETTING',
    /setting username is required/,
  );
  fails(
    () => validateElasticInputSettings('i', { ...base, username: 'a:b', password: 'p' }),
    'INPUT_BAD_SETTING',
    /username cannot contain/,
  );
  for (const v of ['10.0.0', '8.17', 'latest', 8])
    fails(
      () => validateElasticInputSettings('i', { ...base, es_version: v }),
      'INPUT_BAD_SETTING',
      /es_version must be a version string/,
    );
  for (const v of [0, 1023, 1024 ** 3, '1MiB'])
    fails(
      () => validateElasticInputSettings('i', { ...base, max_body_bytes: v }),
      'INPUT_BAD_SETTING',
      /max_body_bytes must be an integer number of bytes/,
    );
  fails(
    () => validateElasticInputSettings('i', { ...base, tcp_prot: 1 }),
    'INPUT_UNKNOWN_SETTING',
    /unknown setting tcp_prot; did you mean tcp_port\?/,
  );
  fails(
    () => validateElasticInputSettings('i', { ...base, named_collection: 'nc' }),
    'INPUT_UNKNOWN_SETTING',
    /unknown setting named_collection/,
  );
  fails(
    () => validateElasticInputSettings('i', { ...base, Tcp_Port: 1, tcp_port: 2 }),
    'INPUT_BAD_SETTING',
    /is given twice/,
  );
});

test('validateInputSettings dispatches on type and refuses unknown types', () => {
  assert.equal(validateInputSettings('i', { type: 'elastic', target_stream: 'logs' }).type, 'elastic');
  fails(
    () => validateInputSettings('i', { type: 'splunk-hec', target_stream: 'logs' }),
    'INPUT_UNKNOWN_TYPE',
    /unknown type splunk-hec; supported types: elastic/,
  );
  fails(() => validateInputSettings('i', { target_stream: 'logs' }), 'INPUT_MISSING_SETTING', /type/);
});

test('SHOW CREATE: every resolved setting, password masked, comment quoted', () => {
  const d = validateElasticInputSettings(
    'logs_in',
    {
      type: 'elastic',
      target_stream: 'logs',
      tcp_port: 9200,
      listen_host: '127.0.0.1',
      username: 'u',
      password: "s3cr'et",
    },
    "from 'filebeat'",
  );
  assert.equal(
    showCreateInput(d),
    "CREATE INPUT logs_in SETTINGS type='elastic', target_stream='logs', tcp_port=9200, listen_host='127.0.0.1', " +
      "username='u', password='******', es_version='8.17.0', max_body_bytes=104857600 COMMENT 'from \\'filebeat\\''",
  );
  assert.match(showCreateElasticInput(d, { showSecrets: true }), /password='s3cr\\'et'/);
  const plain = validateElasticInputSettings('my-input', { type: 'elastic', target_stream: 'logs' });
  assert.equal(
    showCreateElasticInput(plain),
    "CREATE INPUT `my-input` SETTINGS type='elastic', target_stream='logs', tcp_port=9997, listen_host='0.0.0.0', es_version='8.17.0', max_body_bytes=104857600",
  );
});
