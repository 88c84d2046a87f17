import type { Actor } from '../catalog/audit.ts';
import type { Catalog, CatalogRecord } from '../catalog/catalog.ts';
import { SerialQueue } from '../catalog/serial-queue.ts';
import type { Engine } from '../engine/engine.ts';
import { err } from '../errors/tributary-error.ts';
import { dropEngineSqlFunction, dropStaleSqlFunctions, engineCreateSql } from './sql-function.ts';
import { keepsSerializedState, UDA_FOLD_PREFIX } from './uda-state.ts';
import { type UdfDefinition, type UdfInput, udfDefinition } from './udf-definition.ts';
import {
  engineFunctionName,
  removeStaleUdfFiles,
  removeUdfFiles,
  writeUdfFiles,
} from './udf-engine-files.ts';
import { type UserDefinedFunction, udfResource } from './udf-resource.ts';

export const UDF_KIND = 'udf';

/** How a name in SQL resolves to a user-defined function (the translator's `resolveFunction`). */
export interface UdfResolution {
  readonly clickhouse: string;
  readonly aggregate?: boolean;
}

/**
 * User-defined functions: their catalog records (key: the name) and the engine files that make
 * the engine call them (udf-engine-files.ts). Every change writes the files first, then the
 * catalog, then asks the engine to reload its functions.
 */
export class UdfService {
  private readonly writes = new SerialQueue();

  constructor(
    private readonly catalog: Catalog,
    private readonly engine: Engine,
    /** The directory the engine loads functions from (ChdbEngine's `udfDir`). */
    private readonly dir: string,
  ) {}

  /** At start: the engine files of every catalogued function, nothing else, loaded. */
  async start(): Promise<void> {
    const defs = this.catalog.list<UdfDefinition>(UDF_KIND).map((r) => r.value);
    const executable = defs.filter((d) => d.type !== 'sql');
    removeStaleUdfFiles(this.dir, new Set(executable.map((d) => d.name)));
    for (const d of executable) writeUdfFiles(this.dir, d);
    await this.reload();
    // SQL functions after the others, whose names their bodies may call; one calling another SQL
    // function is created after it (a body naming one not created yet is retried once at the end).
    const sql = defs.filter((d) => d.type === 'sql');
    await dropStaleSqlFunctions(this.engine, new Set(sql.map((d) => d.name)));
    const failed: UdfDefinition[] = [];
    for (const d of sql) await this.createInEngine(d).catch(() => failed.push(d));
    for (const d of failed) await this.createInEngine(d);
  }

  list(): UserDefinedFunction[] {
    return this.catalog
      .list<UdfDefinition>(UDF_KIND)
      .map(udfResource)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  get(name: string): UserDefinedFunction {
    return udfResource(this.record(name));
  }

  definition(name: string): UdfDefinition | undefined {
    return this.catalog.get<UdfDefinition>(UDF_KIND, name)?.value;
  }

  /**
   * Create a function; `replace` replaces one of the same name (CREATE OR REPLACE, PUT), `ifNotExists`
   * leaves an existing one alone. Without either, an existing name is UDF_ALREADY_EXISTS.
   */
  create(
    input: UdfInput,
    actor: Actor,
    options: { replace?: boolean; ifNotExists?: boolean } = {},
  ): Promise<CatalogRecord<UdfDefinition>> {
    const def = udfDefinition(input);
    return this.writes.run(async () => {
      const existing = this.catalog.get<UdfDefinition>(UDF_KIND, def.name);
      if (existing && options.ifNotExists) return existing;
      if (existing && !options.replace) throw err('UDF_ALREADY_EXISTS', { name: def.name });
      // a function changing kind leaves nothing of its old kind behind
      if (existing && existing.value.type === 'sql' && def.type !== 'sql')
        await dropEngineSqlFunction(this.engine, def.name);
      if (existing && existing.value.type !== 'sql' && def.type === 'sql') removeUdfFiles(this.dir, def.name);
      if (def.type === 'sql') await this.createInEngine(def);
      else writeUdfFiles(this.dir, def);
      const record = existing
        ? await this.catalog.update(UDF_KIND, def.name, def, actor)
        : await this.catalog.create(UDF_KIND, def.name, def, actor);
      await this.reload();
      return record;
    });
  }

  /** Drop a function; false when there was none (DROP FUNCTION IF EXISTS). */
  drop(name: string): Promise<boolean> {
    return this.writes.run(async () => {
      const existing = this.catalog.get<UdfDefinition>(UDF_KIND, name);
      if (!existing) return false;
      if (existing.value.type === 'sql') await dropEngineSqlFunction(this.engine, name);
      else removeUdfFiles(this.dir, name);
      await this.catalog.delete(UDF_KIND, name);
      await this.reload();
      return true;
    });
  }

  /**
   * `name` in SQL: a scalar UDF is called by its engine name. A JavaScript aggregate is rewritten
   * before translation (aggregate-udf-rewrite.ts), in a view's query where the view is expanded;
   * one met here was not.
   */
  resolveFunction(name: string): UdfResolution | undefined {
    const def = this.definition(name);
    if (def?.type === 'sql') return { clickhouse: def.name, aggregate: false };
    if (def && !def.is_aggregation) return { clickhouse: engineFunctionName(def), aggregate: false };
    if (def?.is_aggregation)
      throw err('NOT_IMPLEMENTED', {
        detail: `JavaScript aggregate ${name} is not supported here (only in the SELECT of a query, a view or a materialized view)`,
      });
    if (name.startsWith(UDA_FOLD_PREFIX)) {
      const agg = this.definition(name.slice(UDA_FOLD_PREFIX.length));
      if (agg && keepsSerializedState(agg)) return { clickhouse: name, aggregate: false };
    }
    if (name.startsWith('__trb_uda_')) {
      const agg = this.definition(name.slice('__trb_uda_'.length));
      if (agg?.is_aggregation) return { clickhouse: engineFunctionName(agg), aggregate: false };
    }
    return undefined;
  }

  /** Create (or replace) SQL function `def` in the engine: its lambda translated (sql-function.ts). */
  private async createInEngine(def: UdfDefinition): Promise<void> {
    const sql = engineCreateSql(def.name, def.source ?? '', (n) =>
      n === def.name ? undefined : this.resolveFunction(n),
    );
    await this.engine.query(sql, { format: 'TSV' });
  }

  private record(name: string): CatalogRecord<UdfDefinition> {
    const r = this.catalog.get<UdfDefinition>(UDF_KIND, name);
    if (!r) throw err('UDF_NOT_FOUND', { name });
    return r;
  }

  private async reload(): Promise<void> {
    await this.engine.query('SYSTEM RELOAD FUNCTIONS', { format: 'TSV' });
  }
}
