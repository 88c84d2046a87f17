import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Engine, EngineQueryOptions } from '../engine/engine.ts';
import { quoteString } from '../engine/settings-clause.ts';
import { compressFile } from './bz2-codec.ts';
import { insertHead, type ObjectWrite, settingsText } from './s3-engine-sql.ts';
import { S3ObjectClient } from './s3-object-client.ts';
import { compressionFromKey } from './s3-object-keys.ts';
import type { CompressionMethod, S3TableConfig } from './s3-table-settings.ts';
import { uploadLimits } from './s3-upload-limits.ts';

/** The compression of object `key`: the table's method, or the key's extension with `auto`. */
export function compressionOf(config: S3TableConfig, key: string): CompressionMethod {
  return config.compression === 'auto' ? compressionFromKey(key) : config.compression;
}

/**
 * Write the rows of `source` (a SELECT or VALUES of the engine) as new objects: through the
 * engine's s3() for every method it has, or, for bz2, into local files the engine writes (one per
 * partition) that Tributary compresses with bzip2 and uploads with the AWS SDK under the table's
 * (and the INSERT's) s3_* upload limits (multipart above s3_max_single_part_upload_size).
 */
export async function writeObjects(
  engine: Engine,
  w: ObjectWrite,
  source: string,
  options: EngineQueryOptions,
): Promise<void> {
  if (compressionOf(w.config, w.key) !== 'bz2') {
    await engine.query(`${insertHead(w)} ${source}`, options);
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'tributary-bz2-'));
  const client = new S3ObjectClient(w.config, w.creds, uploadLimits(w.settings));
  try {
    // `p_<partition id>` per partition, or one `p_` without PARTITION BY.
    const local = join(dir, w.partitionBy !== undefined ? 'p_{_partition_id}' : 'p_');
    await engine.query(
      `INSERT INTO FUNCTION file(${quoteString(local)}, ${quoteString(w.config.format)}, ${quoteString(w.structure)}, 'none')` +
        (w.partitionBy !== undefined ? ` PARTITION BY (${w.partitionBy})` : '') +
        ` (${w.columns.join(', ')})` +
        settingsText(w.settings) +
        ` ${source}`,
      options,
    );
    const files = (await readdir(dir, { recursive: true, withFileTypes: true }))
      .filter((f) => f.isFile())
      .map((f) => join(f.parentPath, f.name).slice(dir.length + 1))
      .filter((f) => f.startsWith('p_'));
    for (const file of files.sort()) {
      const partition = file.slice(2);
      const compressed = join(dir, `z_${files.indexOf(file)}.bz2`);
      await compressFile(join(dir, file), compressed);
      await client.putFile(w.key.replaceAll('{_partition_id}', partition), compressed);
    }
  } finally {
    client.close();
    await rm(dir, { recursive: true, force: true });
  }
}
