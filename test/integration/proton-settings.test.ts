/**
 * Proton's settings surface (test/fixtures/proton/proton-settings.txt, every query setting of
 * Proton's Settings.h): each of Proton's own settings is accepted with its documented effect, each
 * engine setting is accepted or refused by name, and none answers "Unknown setting" or a 5xx.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { PROTON_SETTINGS } from '../../src/sql/translator/proton-settings.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
let protonNames: string[];
let engineNames: Set<string>;

before(async () => {
  h = await startHarness();
  const text = await readFile(new URL('../fixtures/proton/proton-settings.txt', import.meta.url), 'utf8');
  protonNames = text.split('\n').filter((l) => l.length > 0 && !l.startsWith('#'));
  const rows = await h.trb.services.engine.query('SELECT name FROM system.settings', { format: 'TSV' });
  engineNames = new Set(rows.text().split('\n').filter(Boolean));
});
after(() => h.close());

async function run(sql: string) {
  return h.call('POST', '/v1beta2/queries', { body: { sql } });
}

test('every setting of Proton that the engine does not know is in the registry of Proton settings', () => {
  assert.ok(protonNames.length > 600, `${protonNames.length} names`);
  const own = protonNames.filter((n) => !engineNames.has(n));
  assert.ok(own.length > 60, `${own.length} Proton-only names`);
  assert.deepEqual(
    own.filter((n) => !PROTON_SETTINGS.has(n)),
    [],
    'Proton-only settings missing from src/sql/translator/proton-settings.ts',
  );
  // The registry holds no engine setting (it would hide it from the engine).
  assert.deepEqual(
    [...PROTON_SETTINGS.keys()].filter((n) => engineNames.has(n)),
    [],
  );
});

test("each of Proton's own settings is accepted in a historical query", async () => {
  for (const name of PROTON_SETTINGS.keys()) {
    const value = name === 'seek_to' ? "'earliest'" : name === 'query_mode' ? "'table'" : '1';
    const r = await run(`SELECT 1 AS one SETTINGS ${name} = ${value}`);
    assert.equal(r.statusCode, 200, `${name}: ${r.body}`);
  }
});

test('every engine setting of the list is accepted or refused by name, never unknown, never 5xx', async () => {
  let refused = 0;
  for (const name of protonNames.filter((n) => engineNames.has(n))) {
    const r = await run(`SELECT 1 SETTINGS ${name} = 1`);
    assert.ok(r.statusCode < 500, `${name}: ${r.statusCode} ${r.body}`);
    if (r.statusCode === 200) continue;
    const body = r.json() as { code: number; message: string };
    assert.doesNotMatch(body.message, /unknown setting/i, name);
    if (r.statusCode === 403) {
      refused++;
      assert.equal(body.code, 164, name);
      assert.match(body.message, new RegExp(name), 'the refusal names the setting');
    }
  }
  assert.ok(refused > 0);
});

test('docs/sql-reference.md lists every Proton setting with its effect', async () => {
  const text = await readFile(new URL('../../docs/sql-reference.md', import.meta.url), 'utf8');
  const block = /<!-- proton-settings:start -->([\s\S]*?)<!-- proton-settings:end -->/.exec(text)?.[1] ?? '';
  const documented = new Map(
    [...block.matchAll(/^\| `([a-z_0-9]+)` \| ([a-z ]+) \|/gm)].map((m) => [m[1], m[2]] as const),
  );
  assert.deepEqual([...PROTON_SETTINGS].map(([n, s]) => [n, s.effect]).sort(), [...documented].sort());
});

test('asterisk_include_reserved_columns = false leaves the _tp_ columns out of *', async () => {
  let r = await h.call('POST', '/v1beta2/exec', {
    body: { sql: 'CREATE STREAM star_s (a int, b string)', type: 'ddl' },
  });
  assert.equal(r.statusCode, 204, r.body);
  r = await h.call('POST', '/v1beta2/streams/star_s/ingest', {
    body: { columns: ['a', 'b'], data: [[1, 'x']] },
  });
  assert.ok(r.statusCode < 300, r.body);
  const names = async (sql: string) => {
    const res = await run(sql);
    assert.equal(res.statusCode, 200, res.body);
    // The first event describes the query, its result header included.
    const data = /event: query\ndata: (.*)\n/.exec(res.body)?.[1] ?? '{}';
    return ((JSON.parse(data) as { result?: { header?: { name: string }[] } }).result?.header ?? []).map(
      (c) => c.name,
    );
  };
  assert.deepEqual(await names('SELECT * FROM table(star_s)'), ['a', 'b', '_tp_time']);
  assert.deepEqual(
    await names('SELECT * FROM table(star_s) SETTINGS asterisk_include_reserved_columns = false'),
    ['a', 'b'],
  );
  assert.deepEqual(
    await names('SELECT * FROM (SELECT * FROM table(star_s)) SETTINGS asterisk_include_reserved_columns = 0'),
    ['a', 'b'],
  );
  assert.deepEqual(
    await names('SELECT * FROM table(star_s) SETTINGS asterisk_include_reserved_columns = true'),
    ['a', 'b', '_tp_time'],
  );
});
