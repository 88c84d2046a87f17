import assert from 'node:assert/strict';
import { test } from 'node:test';
import { showCreateInput, validateInputSettings } from '../../src/connectors/inputs/input-definition.ts';
import { inputSettingsFromAst } from '../../src/connectors/inputs/input-settings.ts';
import { isTributaryError } from '../../src/errors/tributary-error.ts';
import type { CreateInput } from '../../src/sql/index.ts';
import { parseStatement } from '../../src/sql/index.ts';

function definitionOf(sql: string) {
  const stmt = parseStatement(sql) as CreateInput;
  assert.equal(stmt.kind, 'CreateInput');
  return validateInputSettings(stmt.name, inputSettingsFromAst(stmt.name, stmt.settings), stmt.comment);
}

test('the CREATE INPUT of the issue gives the definition, with defaults resolved', () => {
  const d = definitionOf(
    "CREATE INPUT logs_in SETTINGS type='elastic', target_stream='logs', tcp_port=9200, listen_host='127.0.0.1' COMMENT 'from filebeat'",
  );
  assert.deepEqual(d, {
    name: 'logs_in',
    type: 'elastic',
    target_stream: 'logs',
    tcp_port: 9200,
    listen_host: '127.0.0.1',
    es_version: '8.17.0',
    max_body_bytes: 104857600,
    comment: 'from filebeat',
  });
});

test('SHOW CREATE INPUT parses back to the same definition (with secrets shown)', () => {
  const d = definitionOf(
    "CREATE INPUT `odd name` SETTINGS type='elastic', target_stream='logs', username='u', password='it''s \\\\ secret', es_version='8.11.0' COMMENT 'a \\'quoted\\' comment'",
  );
  assert.equal(d.password, "it's \\ secret");
  assert.deepEqual(definitionOf(showCreateInput(d, { showSecrets: true })), d);
  assert.match(showCreateInput(d), /password='\*\*\*\*\*\*'/);
});

test('setting values must be literals; a bare name is a string', () => {
  assert.equal(
    definitionOf("CREATE INPUT i SETTINGS type='elastic', target_stream=logs").target_stream,
    'logs',
  );
  assert.throws(
    () => definitionOf("CREATE INPUT i SETTINGS type='elastic', target_stream='logs', tcp_port=9000+1"),
    (e: unknown) =>
      isTributaryError(e) &&
      e.errorName === 'INPUT_BAD_SETTING' &&
      /tcp_port must be a literal/.test(e.message),
  );
  assert.throws(
    () => definitionOf("CREATE INPUT i SETTINGS type='elastic', target_stream='logs', tcp_port=-5"),
    (e: unknown) => isTributaryError(e) && /tcp_port must be an integer from 0 to 65535/.test(e.message),
  );
});
