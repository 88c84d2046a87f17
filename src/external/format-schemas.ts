import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Actor } from '../catalog/audit.ts';
import type { Catalog, CatalogRecord } from '../catalog/catalog.ts';
import type { Engine } from '../engine/engine.ts';
import { engineError } from '../engine/engine-error.ts';
import { quoteString } from '../engine/settings-clause.ts';
import { err } from '../errors/tributary-error.ts';

/** A format schema as the catalog keeps it (kind `schema`, key its name): the contract's Schema. */
export interface FormatSchemaRecord {
  name: string;
  /** `Protobuf` or `Avro`. */
  type: string;
  content: string;
}

const KIND = 'schema';
const TYPES: Readonly<Record<string, string>> = { protobuf: 'Protobuf', avro: 'Avro' };
const FILE_EXTENSION: Readonly<Record<string, string>> = { Protobuf: 'proto', Avro: 'avsc' };
/** Formats that exist but take no schema (their TYPE is refused with code 2613, others with 73). */
const SCHEMALESS_FORMATS = new Set([
  'json',
  'jsoneachrow',
  'jsoncompacteachrow',
  'jsonlines',
  'ndjson',
  'csv',
  'csvwithnames',
  'tsv',
  'tabseparated',
  'tsvwithnames',
  'parquet',
  'orc',
  'arrow',
  'arrowstream',
  'native',
  'rawblob',
  'msgpack',
  'values',
  'xml',
  'markdown',
  'lineasstring',
  'regexp',
  'template',
  'customseparated',
  'npy',
  'bsoneachrow',
  'rowbinary',
  'protobufsingle',
  'protobuflist',
  'capnproto',
]);

/**
 * Format schemas (CREATE FORMAT SCHEMA): kept in the catalog and written as files under
 * `<dataDir>/format_schemas`, the directory the engine's `format_schema` setting points into when
 * an s3 table reads or writes Protobuf.
 */
export class FormatSchemas {
  readonly dir: string;

  constructor(
    private readonly catalog: Catalog,
    dataDir: string,
    private readonly engine?: Engine,
  ) {
    this.dir = join(dataDir, 'format_schemas');
  }

  get(name: string): CatalogRecord<FormatSchemaRecord> | undefined {
    return this.catalog.get<FormatSchemaRecord>(KIND, name);
  }

  list(): CatalogRecord<FormatSchemaRecord>[] {
    return this.catalog.list<FormatSchemaRecord>(KIND).sort((a, b) => a.key.localeCompare(b.key));
  }

  /** The type's canonical spelling (Proton's codes: 2613 for a format without schemas, 73 for no format). */
  static typeOf(type: string): string {
    const t = TYPES[type.toLowerCase()];
    if (t) return t;
    if (SCHEMALESS_FORMATS.has(type.toLowerCase())) throw err('FORMAT_SCHEMA_UNSUPPORTED_TYPE', { type });
    throw err('FORMAT_SCHEMA_UNKNOWN_TYPE', { type });
  }

  async create(
    record: FormatSchemaRecord,
    actor: Actor,
    options: { orReplace: boolean; ifNotExists: boolean },
  ): Promise<void> {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(record.name))
      throw err('FORMAT_SCHEMA_BAD', {
        name: record.name,
        detail: 'the name takes letters, digits and underscores',
      });
    if (!record.content.trim())
      throw err('BAD_ARGUMENTS', { detail: `Format schema ${record.name}: the schema body is empty` });
    if (this.get(record.name)) {
      if (options.ifNotExists) return;
      if (!options.orReplace)
        throw err('RESOURCE_ALREADY_EXISTS', { kind: 'Format schema', name: record.name });
    }
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await this.check(record);
    await writeFile(this.file(record), record.content, { mode: 0o600 });
    await this.catalog.put(KIND, record.name, record, actor);
  }

  async drop(name: string, options: { ifExists: boolean }): Promise<void> {
    const r = this.get(name);
    if (!r) {
      if (options.ifExists) return;
      throw err('FORMAT_SCHEMA_NOT_FOUND', { name });
    }
    await this.catalog.delete(KIND, name);
    await rm(this.file(r.value), { force: true });
  }

  /**
   * `schema:Message` as the engine's `format_schema` value: the absolute file and the message.
   * The file is written again if it went missing (e.g. a data directory restored from the catalog).
   */
  enginePath(reference: string): string {
    const [name = '', message = ''] = reference.split(':');
    const r = this.get(name);
    if (!r) throw err('FORMAT_SCHEMA_NOT_FOUND', { name });
    if (r.value.type !== 'Protobuf')
      throw err('FORMAT_SCHEMA_BAD', {
        name,
        detail: `is a ${r.value.type} schema; the Protobuf formats need a Protobuf one`,
      });
    const file = this.file(r.value);
    if (!existsSync(file)) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      writeFileSync(file, r.value.content, { mode: 0o600 });
    }
    return `${file}:${message}`;
  }

  /**
   * Avro: the body is JSON. Protobuf: the engine parses it (a message name no schema has answers
   * "not found" for a schema that parses, code 434 for one that does not).
   */
  private async check(r: FormatSchemaRecord): Promise<void> {
    if (r.type === 'Avro') {
      try {
        JSON.parse(r.content);
      } catch (e) {
        throw err('FORMAT_SCHEMA_INCORRECT_AVRO', { name: r.name, detail: (e as Error).message });
      }
      return;
    }
    if (!this.engine) return;
    const probe = join(this.dir, `.check-${randomUUID()}.proto`);
    await writeFile(probe, r.content, { mode: 0o600 });
    try {
      await this.engine.query(
        `SELECT * FROM format(Protobuf, 'a Int32', '') SETTINGS format_schema = ${quoteString(`${probe}:TributarySchemaCheck`)}`,
      );
    } catch (e) {
      const ee = engineError(e);
      if (ee.code === 434) throw ee;
    } finally {
      await rm(probe, { force: true });
    }
  }

  private file(r: FormatSchemaRecord): string {
    return join(this.dir, `${r.name}.${FILE_EXTENSION[r.type] ?? 'schema'}`);
  }
}
