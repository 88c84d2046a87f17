/**
 * Every statement of the Proton smoke corpus that has a historical engine form translates to SQL
 * the engine's own parser accepts (formatQueryOrNull is not NULL). Statements without one
 * (streaming-only functions, session/changelog windows, DDL) must fail with NOT_IMPLEMENTED or,
 * for functions only a user-defined function could supply, UNKNOWN_FUNCTION.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { ChdbEngine } from '../../src/engine/chdb-engine.ts';
import { quoteString } from '../../src/engine/settings-clause.ts';
import { isTributaryError } from '../../src/errors/tributary-error.ts';
import { parseStatement } from '../../src/sql/parser/parse.ts';
import type { TableResolver } from '../../src/sql/translator/resolver.ts';
import { translate } from '../../src/sql/translator/translate.ts';

const CORPUS = '/work/shared/conformance/proton-smoke';

function statements(): string[] {
  const out = new Set<string>();
  for (const file of readdirSync(CORPUS)) {
    const text = readFileSync(join(CORPUS, file), 'utf8');
    const doc = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
    const visit = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(visit);
      else if (v && typeof v === 'object') {
        const o = v as Record<string, unknown>;
        if (o.client === 'python' && typeof o.query === 'string') out.add(o.query);
        Object.values(o).forEach(visit);
      }
    };
    visit(doc);
  }
  return [...out];
}

const resolver: TableResolver = {
  resolve: (db, name) => ({ kind: 'stream', engineSql: `\`${db ?? 'default'}\`.\`${name}\`` }),
};

test('translated corpus statements are valid engine SQL; the others fail for a stated reason', async () => {
  const translated: string[] = [];
  const unexpected: string[] = [];
  for (const s of statements()) {
    try {
      parseStatement(s);
    } catch {
      continue; // the corpus's own typos; see sql-conformance-corpus.test.ts
    }
    try {
      translated.push(translate(s, { resolver }));
    } catch (e) {
      if (
        isTributaryError(e) &&
        (e.errorName === 'NOT_IMPLEMENTED' ||
          e.errorName === 'UNKNOWN_FUNCTION' ||
          e.errorName === 'BAD_ARGUMENTS')
      )
        continue;
      unexpected.push(`${s}: ${(e as Error).message}`);
    }
  }
  assert.deepEqual(unexpected, []);
  assert.ok(translated.length > 2000, `only ${translated.length} statements translated`);

  const dir = await mkdtemp(join(tmpdir(), 'tributary-sql-corpus-'));
  const engine = new ChdbEngine({ dataPath: dir, sessions: { system: 1, user: 1 } });
  try {
    const list = translated.map(quoteString).join(', ');
    const text = (
      await engine.query(
        `SELECT q FROM (SELECT arrayJoin([${list}]) AS q) WHERE formatQueryOrNull(q) IS NULL`,
        { format: 'JSONEachRow' },
      )
    ).text();
    const rejected = text.split('\n').filter((l) => l.trim() !== '');
    assert.deepEqual(rejected, [], `${rejected.length} translations the engine cannot parse`);
  } finally {
    await engine.close();
    await rm(dir, { recursive: true, force: true });
  }
});
