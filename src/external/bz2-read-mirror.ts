import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { quoteString } from '../engine/settings-clause.ts';
import type { Logger } from '../log/logger.ts';
import { decompressTo } from './bz2-codec.ts';
import type { S3Credentials } from './s3-credentials.ts';
import { S3ObjectClient } from './s3-object-client.ts';
import { compressionFromKey } from './s3-object-keys.ts';
import type { S3TableConfig } from './s3-table-settings.ts';

/** Whether SELECT reads a table's objects as bz2 (which the engine cannot decompress). */
export function readsBz2(config: S3TableConfig): boolean {
  return (
    config.compression === 'bz2' ||
    (config.compression === 'auto' && compressionFromKey(config.readFrom) === 'bz2')
  );
}

/** The literal start of a read_from pattern (up to its first glob character): the listing prefix. */
function literalPrefix(pattern: string): string {
  const i = pattern.search(/[*?{]/);
  return i < 0 ? pattern : pattern.slice(0, i);
}

/**
 * A read_from pattern as a regular expression over keys, with the engine's meaning: `*` and `?`
 * stop at `/`, `**` does not, `{a,b}` alternatives, `{N..M}` numbers (as wide as N when it has
 * leading zeros).
 */
export function keyPatternRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        out += '.*';
        i++;
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '{') {
      const end = pattern.indexOf('}', i);
      const body = pattern.slice(i + 1, end);
      const range = /^(\d+)\.\.(\d+)$/.exec(body);
      if (range) {
        const [from, to] = [Number(range[1]), Number(range[2])];
        const width = (range[1] as string).length;
        const alternatives: string[] = [];
        for (let n = from; n <= to && alternatives.length <= 100_000; n++)
          alternatives.push(String(n).padStart(width, '0'));
        out += `(?:${alternatives.join('|')})`;
      } else out += `(?:${body.split(',').map(escapeRegExp).join('|')})`;
      i = end;
    } else out += escapeRegExp(c);
  }
  return new RegExp(`^${out}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * The decompressed copies of the bz2 objects of s3 tables, one directory per table with the
 * objects' keys as paths. Before a SELECT reads such a table, `sync` lists the objects under the
 * read pattern's literal prefix, downloads and decompresses (bzip2) the new and changed ones
 * (by ETag) and removes the copies of objects that are gone; the engine then reads the directory
 * with the same pattern (its File engine expands the globs exactly as its s3 engine does).
 */
export class Bz2ReadMirror {
  /** Per table: key -> ETag of the copy on disk. */
  private readonly copies = new Map<string, Map<string, string>>();
  /** One sync of a table at a time. */
  private readonly running = new Map<string, Promise<boolean>>();

  constructor(
    private readonly root: string,
    private readonly logger?: Logger,
  ) {}

  /** The directory of a table's copies. */
  dir(table: string): string {
    return join(this.root, encodeURIComponent(table));
  }

  /** The engine table over the copies: the same structure and pattern, read uncompressed. */
  readTableDdl(
    engineTable: string,
    table: string,
    structure: string,
    config: S3TableConfig,
    settings: Readonly<Record<string, string | number>>,
  ): string {
    const parts = Object.entries(settings).map(
      ([k, v]) => `${k} = ${typeof v === 'string' ? quoteString(v) : v}`,
    );
    return (
      `CREATE TABLE ${engineTable} (${structure}) ENGINE = File(${quoteString(config.format)}, ` +
      `${quoteString(`${this.dir(table)}/${config.readFrom}`)}, 'none')` +
      (parts.length ? ` SETTINGS ${parts.join(', ')}` : '')
    );
  }

  /** Start a table afresh (at CREATE and at start: copies of an earlier process are not trusted). */
  async reset(table: string): Promise<void> {
    this.copies.set(table, new Map());
    await rm(this.dir(table), { recursive: true, force: true });
    await mkdir(this.dir(table), { recursive: true, mode: 0o700 });
  }

  async remove(table: string): Promise<void> {
    this.copies.delete(table);
    await rm(this.dir(table), { recursive: true, force: true });
    await rm(`${this.dir(table)}.partial`, { recursive: true, force: true });
  }

  /**
   * Bring the copies of `table` up to date with its store (one sync at a time per table); true
   * when the set of copies changed (the engine's File table lists its files when it is made).
   */
  sync(table: string, config: S3TableConfig, creds: S3Credentials | undefined): Promise<boolean> {
    const earlier = this.running.get(table) ?? Promise.resolve(false);
    const next = earlier.catch(() => undefined).then(() => this.syncNow(table, config, creds));
    this.running.set(table, next);
    return next.finally(() => {
      if (this.running.get(table) === next) this.running.delete(table);
    });
  }

  private async syncNow(
    table: string,
    config: S3TableConfig,
    creds: S3Credentials | undefined,
  ): Promise<boolean> {
    const dir = this.dir(table);
    let copies = this.copies.get(table);
    if (!copies) {
      await this.reset(table);
      copies = this.copies.get(table) as Map<string, string>;
    }
    const client = new S3ObjectClient(config, creds);
    let changed = false;
    try {
      const matches = keyPatternRegExp(config.readFrom);
      const listed = (await client.list(literalPrefix(config.readFrom))).filter(
        (o) => matches.test(o.key) && (config.compression === 'bz2' || compressionFromKey(o.key) === 'bz2'),
      );
      const present = new Set<string>();
      for (const o of listed) {
        const path = resolve(dir, o.key);
        if (!path.startsWith(dir + sep) || o.key.endsWith('/')) {
          this.logger?.warn(
            { table, key: o.key },
            'external table: bz2 object key is not a file path; skipped',
          );
          continue;
        }
        present.add(o.key);
        if (copies.get(o.key) === o.etag) continue;
        await mkdir(dirname(path), { recursive: true });
        // Decompressed beside the directory, so no read sees a partial copy.
        const partial = join(`${dir}.partial`, String(present.size));
        await mkdir(dirname(partial), { recursive: true });
        try {
          await decompressTo(await client.get(o.key), partial, o.key);
        } catch (e) {
          await rm(partial, { force: true });
          throw e;
        }
        await rename(partial, path);
        if (!copies.has(o.key)) changed = true;
        copies.set(o.key, o.etag);
      }
      for (const key of [...copies.keys()])
        if (!present.has(key)) {
          copies.delete(key);
          changed = true;
          await rm(resolve(dir, key), { force: true });
        }
    } finally {
      client.close();
    }
    return changed;
  }
}
