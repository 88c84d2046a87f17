import assert from 'node:assert/strict';
import { test } from 'node:test';
import { streamSpecFromAst, tableEngineOf } from '../../src/queries/statements/stream-spec-from-ast.ts';
import type { CreateStream } from '../../src/sql/ast/statement.ts';
import { parseStatement } from '../../src/sql/parser/parse.ts';

const spec = (sql: string) => streamSpecFromAst(parseStatement(sql) as CreateStream, 'default');

test('ENGINE of CREATE STREAM: a table engine is kept as written; the Stream engine and none are streams', () => {
  assert.equal(spec('CREATE STREAM t (a int32) ENGINE = Memory').tableEngine, 'Memory');
  assert.equal(spec('CREATE STREAM t (a int32) ENGINE = MergeTree() ORDER BY a').tableEngine, 'MergeTree()');
  assert.equal(
    spec('CREATE STREAM t (a int32) ENGINE = Join(ANY, LEFT, a)').tableEngine,
    'Join(`ANY`, `LEFT`, a)',
  );
  assert.equal(spec('CREATE STREAM t (a int32)').tableEngine, undefined);
  assert.equal(spec('CREATE STREAM t (a int32) ENGINE = Stream(1, 1, rand())').tableEngine, undefined);
  assert.equal(spec('CREATE STREAM t (a int32) ENGINE = stream').tableEngine, undefined);
  assert.equal(tableEngineOf(undefined), undefined);
  const random = parseStatement('CREATE STREAM t (a int32) ENGINE = Random()') as CreateStream;
  assert.equal(tableEngineOf(random.engine), undefined);
});
