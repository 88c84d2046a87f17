import { quoteString } from '../engine/settings-clause.ts';
import { displayName } from './sql-text.ts';
import {
  DEFAULT_RETENTION_BYTES,
  DEFAULT_RETENTION_MS,
  type StreamColumn,
  type StreamDefinition,
} from './stream-definition.ts';

function columnLine(c: StreamColumn): string {
  let line = `\`${c.name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\` ${c.type}`;
  if (c.default) line += ` DEFAULT ${c.default.proton}`;
  if (c.alias) line += ` ALIAS ${c.alias.proton}`;
  if (c.comment) line += ` COMMENT ${quoteString(c.comment)}`;
  if (c.codec) line += ` CODEC(${c.codec})`;
  if (c.ttl) line += ` TTL ${c.ttl.proton}`;
  return line;
}

/**
 * The Proton-dialect CREATE STREAM for a definition, in the shape Proton's SHOW CREATE prints
 * (columns, the implicit `_tp_time` and its index, keys, TTL, SETTINGS). This is what the Stream
 * resource shows as `create_query`; run again, it declares an equivalent stream.
 */
export function printCreateQuery(def: Omit<StreamDefinition, 'createQuery'>): string {
  const parts = [
    ...def.columns.map(columnLine),
    ...def.indexes.map(
      (ix) => `INDEX ${displayName(ix.name)} ${ix.expr.proton} TYPE ${ix.type} GRANULARITY ${ix.granularity}`,
    ),
  ];
  const lines = [
    `CREATE STREAM ${displayName(def.db)}.${displayName(def.name)}`,
    '(',
    parts.map((p) => `  ${p}`).join(',\n'),
    ')',
  ];
  if (def.tableEngine) return printPlainTableTail(def, lines);
  if (def.primaryKey) lines.push(`PRIMARY KEY ${def.primaryKey.proton}`);
  lines.push(`ORDER BY ${def.orderBy.proton}`);
  if (def.partitionBy) lines.push(`PARTITION BY ${def.partitionBy.proton}`);
  if (def.ttl) lines.push(`TTL ${def.ttl.proton}`);
  const settings: string[] = [`mode = ${quoteString(def.mode)}`];
  if (def.eventTimeColumn) settings.push(`event_time_column = ${quoteString(def.eventTimeColumn.proton)}`);
  if (def.versionColumn !== '_tp_time') settings.push(`version_column = ${quoteString(def.versionColumn)}`);
  settings.push(`storage_type = ${quoteString(def.storageType)}`);
  settings.push(`logstore_retention_bytes = ${def.logstoreRetentionBytes}`);
  settings.push(`logstore_retention_ms = ${def.logstoreRetentionMs}`);
  if (def.shards !== 1) settings.push(`shards = ${def.shards}`);
  if (def.replicationFactor !== 1) settings.push(`replicas = ${def.replicationFactor}`);
  settings.push(...passiveSettings(def));
  lines.push(`SETTINGS ${settings.join(', ')}`);
  return lines.join('\n');
}

/**
 * The rest of a plain table's statement (a stream with a table ENGINE): `ENGINE = ...`, the keys it
 * has (ORDER BY only when it is not `tuple()`, the default), and only the settings that differ from
 * their defaults (such a stream is always of mode append).
 */
function printPlainTableTail(def: Omit<StreamDefinition, 'createQuery'>, lines: string[]): string {
  lines.push(`ENGINE = ${def.tableEngine}`);
  if (def.primaryKey) lines.push(`PRIMARY KEY ${def.primaryKey.proton}`);
  if (def.orderBy.proton.replace(/\s+/g, '') !== 'tuple()') lines.push(`ORDER BY ${def.orderBy.proton}`);
  if (def.partitionBy) lines.push(`PARTITION BY ${def.partitionBy.proton}`);
  if (def.ttl) lines.push(`TTL ${def.ttl.proton}`);
  const settings: string[] = [];
  if (def.storageType !== 'hybrid') settings.push(`storage_type = ${quoteString(def.storageType)}`);
  if (def.logstoreRetentionBytes !== DEFAULT_RETENTION_BYTES)
    settings.push(`logstore_retention_bytes = ${def.logstoreRetentionBytes}`);
  if (def.logstoreRetentionMs !== DEFAULT_RETENTION_MS)
    settings.push(`logstore_retention_ms = ${def.logstoreRetentionMs}`);
  if (def.shards !== 1) settings.push(`shards = ${def.shards}`);
  if (def.replicationFactor !== 1) settings.push(`replicas = ${def.replicationFactor}`);
  settings.push(...passiveSettings(def));
  if (settings.length) lines.push(`SETTINGS ${settings.join(', ')}`);
  return lines.join('\n');
}

function passiveSettings(def: Omit<StreamDefinition, 'createQuery'>): string[] {
  return Object.entries(def.settings).map(([k, v]) => `${k} = ${/^-?\d+$/.test(v) ? v : quoteString(v)}`);
}
