import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Actor } from '../catalog/audit.ts';
import type { Catalog, CatalogRecord } from '../catalog/catalog.ts';
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
  ) {
    this.dir = join(dataDir, 'format_schemas');
  }

  get(name: string): CatalogRecord<FormatSchemaRecord> | undefined {
    return this.catalog.get<FormatSchemaRecord>(KIND, name);
  }

  list(): CatalogRecord<FormatSchemaRecord>[] {
    return this.catalog.list<FormatSchemaRecord>(KIND).sort((a, b) => a.key.localeCompare(b.key));
  }

  /** The type's canonical spelling, or FORMAT_SCHEMA_BAD. */
  static typeOf(name: string, type: string): string {
    const t = TYPES[type.toLowerCase()];
    if (!t)
      throw err('FORMAT_SCHEMA_BAD', { name, detail: `TYPE ${type} is not supported (Protobuf or Avro)` });
    return t;
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
      throw err('FORMAT_SCHEMA_BAD', { name: record.name, detail: 'the schema is empty' });
    if (this.get(record.name)) {
      if (options.ifNotExists) return;
      if (!options.orReplace)
        throw err('RESOURCE_ALREADY_EXISTS', { kind: 'Format schema', name: record.name });
    }
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFile(this.file(record), record.content, { mode: 0o600 });
    await this.catalog.put(KIND, record.name, record, actor);
  }

  async drop(name: string, options: { ifExists: boolean }): Promise<void> {
    const r = this.get(name);
    if (!r) {
      if (options.ifExists) return;
      throw err('RESOURCE_NOT_FOUND', { kind: 'Format schema', name });
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
    if (!r) throw err('FORMAT_SCHEMA_BAD', { name, detail: 'does not exist (CREATE FORMAT SCHEMA first)' });
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

  private file(r: FormatSchemaRecord): string {
    return join(this.dir, `${r.name}.${FILE_EXTENSION[r.type] ?? 'schema'}`);
  }
}
