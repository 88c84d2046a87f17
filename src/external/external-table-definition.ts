import { quoteIdent, quoteString } from '../engine/settings-clause.ts';
import { SECRET_SETTINGS, type SettingValue } from './s3-table-settings.ts';

/** How a masked secret is shown (SHOW CREATE, REST answers). */
export const MASKED = '******';

/** An external table as the catalog keeps it (kind `external_table`, key `db.name`). */
export interface ExternalTableRecord {
  db: string;
  name: string;
  /** Columns in order, Proton type names. */
  columns: { name: string; type: string }[];
  /** PARTITION BY expression, Proton text. */
  partition_by?: string;
  /** The SETTINGS as declared (secrets included: the catalog is Tributary's own store). */
  settings: Record<string, SettingValue>;
  comment?: string;
}

/** The declared settings with every secret masked. */
export function maskedSettings(record: ExternalTableRecord): Record<string, SettingValue> {
  return Object.fromEntries(
    Object.entries(record.settings).map(([k, v]) => [k, SECRET_SETTINGS.has(k) ? MASKED : v]),
  );
}

function literal(v: SettingValue): string {
  return typeof v === 'string' ? quoteString(v) : String(v);
}

/** The CREATE statement of an external table, secrets masked (SHOW CREATE, `create_query`). */
export function externalTableCreateQuery(record: ExternalTableRecord): string {
  const cols = record.columns.map((c) => `${quoteIdent(c.name)} ${c.type}`).join(', ');
  const settings = Object.entries(maskedSettings(record))
    .map(([k, v]) => `${k} = ${literal(v)}`)
    .join(', ');
  return (
    `CREATE EXTERNAL TABLE ${quoteIdent(record.db)}.${quoteIdent(record.name)} (${cols})` +
    (record.partition_by ? ` PARTITION BY ${record.partition_by}` : '') +
    ` SETTINGS ${settings}` +
    (record.comment !== undefined ? ` COMMENT ${quoteString(record.comment)}` : '')
  );
}
