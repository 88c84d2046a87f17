/**
 * Golden-test support for the translator, in kysely's style: each case states the exact
 * ClickHouse SQL expected AND runs it on the real engine. Plain ClickHouse tables stand in for
 * streams (the stream layer is not involved).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChdbEngine } from '../../src/engine/chdb-engine.ts';
import { parseQuery } from '../../src/sql/parser/parse.ts';
import { mapResolver, type ResolvedTable, type TableResolver } from '../../src/sql/translator/resolver.ts';
import { type TranslateOptions, translate } from '../../src/sql/translator/translate.ts';

/** The stand-in streams: engine DDL and rows. */
const SETUP = [
  `CREATE TABLE clicks (id String, value Float32, url String, raw String, ts DateTime64(3, 'UTC'),
     _tp_time DateTime64(3, 'UTC'), _tp_sn Int64, _tp_delta Int8 DEFAULT 1) ENGINE = MergeTree ORDER BY _tp_sn`,
  `INSERT INTO clicks (id, value, url, raw, ts, _tp_time, _tp_sn) VALUES
     ('dev1', 57.3, 'https://a.example/x?q=1', '{"a":{"b":"1"},"n":7}', '2020-02-02 20:00:00.000', '2020-02-02 20:00:00.000', 0),
     ('dev2', 58.3, 'https://b.example/y', '{"a":{"b":"2"},"n":8}', '2020-02-02 20:00:03.000', '2020-02-02 20:00:03.000', 1),
     ('dev6', 66, 'https://a.example/z', '{"a":{"b":"3"},"n":9}', '2020-02-02 20:00:04.000', '2020-02-02 20:00:04.000', 2),
     ('dev8', 67, 'https://c.example/', '{"a":{"b":"4"},"n":10}', '2020-02-02 20:00:10.000', '2020-02-02 20:00:10.000', 3),
     ('dev1', 60, 'https://a.example/w', '{"a":{"b":"5"},"n":11}', '2020-02-02 20:00:12.000', '2020-02-02 20:00:12.000', 4)`,
  `CREATE TABLE devices (id String, type String, floor Int32) ENGINE = MergeTree ORDER BY id`,
  `INSERT INTO devices VALUES ('dev1', 'roof', 3), ('dev2', 'wall', 1), ('dev6', 'field', 0), ('dev9', 'roof', 5)`,
  `CREATE TABLE kv (k String, v Int64, _tp_time DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY k`,
  `INSERT INTO kv VALUES ('a', 1, '2024-01-01 00:00:00'), ('a', 2, '2024-01-01 00:00:01'), ('b', 5, '2024-01-01 00:00:00')`,
  'CREATE TABLE sink (id String, n UInt64) ENGINE = MergeTree ORDER BY id',
];

export const TABLES: Record<string, ResolvedTable> = {
  'default.clicks': {
    kind: 'stream',
    engineSql: '`default`.`clicks`',
    hiddenColumns: ['_tp_sn', '_tp_delta'],
    columns: [
      { name: 'id', type: 'string' },
      { name: 'value', type: 'float32' },
      { name: 'url', type: 'string' },
      { name: 'raw', type: 'string' },
      { name: 'ts', type: "datetime64(3, 'UTC')" },
      { name: '_tp_time', type: "datetime64(3, 'UTC')" },
    ],
  },
  'default.devices': { kind: 'stream', engineSql: '`default`.`devices`' },
  // a versioned_kv stream: history is the latest row per key
  'default.kv': {
    kind: 'stream',
    engineSql: '(SELECT * FROM `default`.`kv` ORDER BY _tp_time DESC LIMIT 1 BY k)',
    insertSql: '`default`.`kv`',
  },
  'default.sink': { kind: 'stream', engineSql: '`default`.`sink`' },
  'default.roof_devices': {
    kind: 'view',
    engineSql: '',
    viewQuery: parseQuery("select id, floor from table(devices) where type = 'roof'"),
    bounded: true,
  },
};

export const resolver: TableResolver = mapResolver(TABLES);

export interface GoldenEngine {
  engine: ChdbEngine;
  /** Assert the exact translation of `proton`, run it, and return the rows (JSONCompactEachRow). */
  check(proton: string, expectedSql: string, options?: Partial<TranslateOptions>): Promise<unknown[][]>;
  /** Run engine SQL and return the rows. */
  rows(sql: string): Promise<unknown[][]>;
  /** Result column names and types of engine SQL. */
  header(sql: string): Promise<{ name: string; type: string }[]>;
  close(): Promise<void>;
}

export async function openGoldenEngine(): Promise<GoldenEngine> {
  const dir = await mkdtemp(join(tmpdir(), 'tributary-sql-golden-'));
  const engine = new ChdbEngine({ dataPath: dir, sessions: { system: 1, user: 1 } });
  for (const sql of SETUP) await engine.query(sql);
  const rows = async (sql: string) =>
    (await engine.query(sql, { format: 'JSONCompactEachRow' }))
      .text()
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as unknown[]);
  return {
    engine,
    rows,
    async check(proton, expectedSql, options = {}) {
      const sql = translate(proton, { resolver, ...options });
      assert.equal(sql, expectedSql);
      return rows(sql);
    },
    async header(sql) {
      const text = (await engine.query(sql, { format: 'JSONCompactEachRowWithNamesAndTypes' })).text();
      const [names, types] = text
        .split('\n')
        .slice(0, 2)
        .map((l) => JSON.parse(l) as string[]) as [string[], string[]];
      return names.map((name, i) => ({ name, type: types[i] as string }));
    },
    async close() {
      await engine.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
