/**
 * SHOW STREAMS [FROM db] [LIKE ...] and SHOW DATABASES through POST /v1beta2/queries: one `name`
 * column; streams sorted by name, LIKE / NOT LIKE filtering. (SHOW VIEWS is in views.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h.close();
});

async function exec(sql: string): Promise<void> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql } });
  assert.equal(r.statusCode, 204, `${sql}: ${r.body}`);
}

/** The header names and rows of a SHOW answered as server-sent events. */
async function show(sql: string): Promise<{ header: string[]; rows: unknown[][] }> {
  const r = await h.call('POST', '/v1beta2/queries', { body: { sql } });
  assert.equal(r.statusCode, 200, `${sql}: ${r.body}`);
  let header: string[] = [];
  const rows: unknown[][] = [];
  for (const block of r.body.split('\n\n')) {
    const lines = block.split('\n');
    const data = lines
      .filter((l) => l.startsWith('data: '))
      .map((l) => l.slice(6))
      .join('\n');
    if (!data) continue;
    if (lines.includes('event: query')) {
      const info = JSON.parse(data) as { result?: { header?: { name: string }[] } };
      if (info.result?.header?.length) header = info.result.header.map((c) => c.name);
    } else if (!lines.some((l) => l.startsWith('event: '))) rows.push(...(JSON.parse(data) as unknown[][]));
  }
  return { header, rows };
}

test('SHOW STREAMS lists stream names sorted, per database, filtered by LIKE / NOT LIKE', async () => {
  await exec('CREATE STREAM zeta (a int32)');
  await exec('CREATE STREAM alpha (a int32)');
  await exec('CREATE DATABASE shop');
  await exec('CREATE STREAM shop.orders (a int32)');
  const all = await show('SHOW STREAMS');
  assert.deepEqual(all.header, ['name']);
  assert.deepEqual(all.rows, [['alpha'], ['zeta']]);
  assert.deepEqual((await show("SHOW STREAMS LIKE 'z%'")).rows, [['zeta']]);
  assert.deepEqual((await show("SHOW STREAMS NOT LIKE 'z%'")).rows, [['alpha']]);
  assert.deepEqual((await show('SHOW STREAMS FROM shop')).rows, [['orders']]);
});

test('SHOW DATABASES lists the databases, filtered by LIKE', async () => {
  await exec('CREATE DATABASE IF NOT EXISTS shop');
  const all = await show('SHOW DATABASES');
  assert.deepEqual(all.header, ['name']);
  const names = all.rows.map((r) => r[0]);
  assert.ok(names.includes('default') && names.includes('shop'), JSON.stringify(names));
  assert.deepEqual((await show("SHOW DATABASES LIKE 'sho%'")).rows, [['shop']]);
});
