import { randomUUID } from 'node:crypto';
import { isLosslessNumber, parse } from 'lossless-json';
import type { Engine } from '../../engine/engine.ts';
import { guardedEngine } from '../../engine/guarded-engine.ts';
import { quoteIdent } from '../../engine/settings-clause.ts';
import { err } from '../../errors/tributary-error.ts';
import { isStreamingQuery } from '../../sql/analyzer/streaming.ts';
import type { Expr } from '../../sql/ast/expression.ts';
import type { InsertStatement } from '../../sql/ast/statement.ts';
import { recordingResolver, type TableResolver } from '../../sql/translator/resolver.ts';
import { translateExpression, translateQuery } from '../../sql/translator/translate.ts';
import type { StreamDefinition } from '../../stream/stream-definition.ts';
import type { StreamStore } from '../../stream/stream-store.ts';
import { withTypeChecks } from '../../stream/table-check-settings.ts';
import { STATE_DB } from '../../streaming/state-table.ts';
import type { StatementHandler } from '../statement-handler.ts';
import { statementPlan } from '../static-rows.ts';

export interface InsertDeps {
  engine: Engine;
  streams: StreamStore;
  resolver: TableResolver;
  defaultDatabase: string;
}

/** Rows of INSERT ... SELECT go to the stream in batches of this many. */
const SELECT_BATCH_ROWS = 65_536;

/** Values parsed from engine JSON, keeping 64-bit integers exact (as strings when past 2^53). */
function fromEngineRow(line: string): unknown[] {
  return (parse(line) as unknown[]).map(function convert(v: unknown): unknown {
    if (isLosslessNumber(v)) {
      const n = Number(v.value);
      return Number.isSafeInteger(n) || !/^-?\d+$/.test(v.value) ? n : v.value;
    }
    if (Array.isArray(v)) return v.map(convert);
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, convert(x)]));
    return v;
  });
}

/** The columns an INSERT names: a list, `* EXCEPT (...)`, or by default every declared column. */
function targetColumns(s: InsertStatement, def: StreamDefinition): string[] {
  const stored = def.columns.filter((c) => !c.alias);
  if (!s.columns) return stored.filter((c) => !c.implicit).map((c) => c.name);
  const out: string[] = [];
  for (const c of s.columns) {
    if (c.kind === 'Identifier') out.push(c.parts[c.parts.length - 1] as string);
    else if (c.kind === 'Asterisk') {
      const except = new Set(c.except ?? []);
      out.push(...stored.map((x) => x.name).filter((n) => !except.has(n)));
    } else
      throw err('BAD_ARGUMENTS', {
        detail: 'INSERT column lists may only name columns or use * EXCEPT (...)',
      });
  }
  return out;
}

/**
 * INSERT INTO stream [(cols)] VALUES ... | SELECT ... : rows take the ingest path (validation,
 * sequence numbers, WAL, notification of streaming queries), exactly like REST ingest.
 */
export function insertHandler(deps: InsertDeps): StatementHandler<InsertStatement> {
  return async (s, ctx) => {
    if (!s.target) throw err('NOT_IMPLEMENTED', { detail: 'INSERT INTO FUNCTION is not supported' });
    const db = s.target.database ?? deps.defaultDatabase;
    const def = deps.streams.require(db, s.target.name).value;
    const columns = targetColumns(s, def);
    return statementPlan(ctx.sql, 'insert', async (signal) => {
      if (s.values) {
        await deps.streams.ingest(db, def.name, {
          columns,
          rows: await evaluateValues(deps, def, columns, s.values),
        });
      } else if (s.query) {
        if (isStreamingQuery(s.query, deps.resolver)) {
          throw err('NOT_IMPLEMENTED', {
            detail:
              'INSERT ... SELECT from a stream runs forever; use a materialized view, or read table(<stream>)',
          });
        }
        const reads = new Set<string>();
        const resolver = recordingResolver(deps.resolver, reads);
        const sql = translateQuery(s.query, { resolver, protonColumnNames: false });
        // The read holds the flush locks of the streams it reads (writing needs none of them).
        const engine = guardedEngine(deps.engine, (work) => deps.streams.read(reads, work));
        let batch: unknown[][] = [];
        for await (const chunk of engine.stream(sql, { lane: 'user', signal })) {
          for (const line of chunk.text().split('\n')) {
            if (!line) continue;
            batch.push(fromEngineRow(line));
            if (batch.length >= SELECT_BATCH_ROWS) {
              await deps.streams.ingest(db, def.name, { columns, rows: batch });
              batch = [];
            }
          }
        }
        if (batch.length) await deps.streams.ingest(db, def.name, { columns, rows: batch });
      } else if (s.format !== undefined && s.data !== undefined) {
        if (!/^JSONEachRow$/i.test(s.format)) {
          throw err('NOT_IMPLEMENTED', {
            detail: `INSERT ... FORMAT ${s.format} is not supported; use JSONEachRow`,
          });
        }
        await deps.streams.ingestBody(db, def.name, Buffer.from(s.data), 'streaming');
      } else {
        throw err('BAD_ARGUMENTS', { detail: 'INSERT needs VALUES, a SELECT or FORMAT with data' });
      }
    });
  };
}

/**
 * VALUES rows as JSON values, read by the engine exactly as its own `INSERT ... VALUES` reads them
 * (expressions evaluated, integers converted as ClickHouse and Proton do, wrapping when out of
 * range): the rows go into a scratch table with the target columns' types and come back as JSON
 * for the ingest path.
 */
export async function evaluateValues(
  deps: { engine: Engine },
  def: Pick<StreamDefinition, 'name'> & {
    columns: readonly { name: string; engineType: string }[];
    settings?: Readonly<Record<string, string>>;
  },
  columns: string[],
  values: readonly (readonly Expr[])[],
): Promise<unknown[][]> {
  for (const row of values) {
    if (row.length !== columns.length) {
      throw err('BAD_ARGUMENTS', {
        detail: `INSERT has ${columns.length} columns but a VALUES row has ${row.length} values`,
      });
    }
  }
  const types = columns.map((c) => {
    const col = def.columns.find((x) => x.name === c);
    if (!col) throw err('INGEST_UNKNOWN_COLUMN', { column: c, stream: def.name });
    return `${quoteIdent(c)} ${col.engineType}`;
  });
  const scratch = `${quoteIdent(STATE_DB)}.${quoteIdent(`insert_${randomUUID().replaceAll('-', '')}`)}`;
  const tuples = values.map((row) => `(${row.map((e) => translateExpression(e)).join(', ')})`);
  try {
    const text = (
      await deps.engine.query(
        `CREATE DATABASE IF NOT EXISTS ${quoteIdent(STATE_DB)};\n` +
          `${withTypeChecks(`CREATE TABLE ${scratch} (${types.join(', ')}) ENGINE = Memory`, def.settings ?? {})};\n` +
          `INSERT INTO ${scratch} VALUES ${tuples.join(', ')};\n` +
          `SELECT * FROM ${scratch}`,
      )
    ).text();
    return text.split('\n').filter(Boolean).map(fromEngineRow);
  } finally {
    await deps.engine.query(`DROP TABLE IF EXISTS ${scratch}`).catch(() => undefined);
  }
}
