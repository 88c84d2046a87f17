import { isLosslessNumber, parse, stringify } from 'lossless-json';

/**
 * Rows of a query result as a receiver gets them. A row arrives as the JSON text of one array in
 * header order (result-sink.ts); numbers stay exact (lossless-json), so a 64-bit integer is sent as
 * the engine wrote it.
 */
export type RowObject = Record<string, unknown>;

/**
 * Whether JSON.parse keeps every number of `line` exact: no run of 16 or more digits (a 64-bit
 * integer past 2^53, or a double written with 17 significant digits). Such rows take lossless-json,
 * which is ~5x slower; most rows do not need it.
 */
function plainNumbers(line: string): boolean {
  return !/\d{16}/.test(line);
}

/** Row `line` (a JSON array in header order) as an object keyed by column name. */
export function rowObject(columns: readonly string[], line: string): RowObject {
  const values = (plainNumbers(line) ? JSON.parse(line) : parse(line)) as unknown[];
  const out: RowObject = {};
  columns.forEach((c, i) => {
    out[c] = values[i];
  });
  return out;
}

/** One JSON object per line (JSONEachRow / JSON lines), each line ending with `\n`. */
export function jsonLines(columns: readonly string[], rows: readonly string[]): string {
  let out = '';
  for (const r of rows) {
    const o = rowObject(columns, r);
    out += `${plainNumbers(r) ? JSON.stringify(o) : stringify(o)}\n`;
  }
  return out;
}

/** A value as text in a template: strings as they are, everything else as its JSON text. */
export function valueText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (isLosslessNumber(v)) return v.toString();
  if (v === null || v === undefined) return '';
  return stringify(v) ?? '';
}

/** `{{.col}}` or `{{col}}` (Timeplus sink templates, Go-template style). */
const PLACEHOLDER = /\{\{\s*\.?([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** Column names a `{{.col}}` template uses. */
export function templateColumns(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => m[1] as string);
}

/** Fill a `{{.col}}` template from one row. */
export function fillTemplate(template: string, row: RowObject): string {
  return template.replace(PLACEHOLDER, (_, name: string) => valueText(row[name]));
}

/**
 * ClickHouse/Proton Template format row placeholders: `${col}` or `${col:Escaping}` with escaping
 * `Raw`, `JSON`, `Quoted`, `Escaped` or `CSV` (default Escaped, as in ClickHouse).
 */
const ROW_FORMAT = /\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*(Raw|JSON|Quoted|Escaped|CSV|None)\s*)?\}/g;

/** Column names a `${col:Escaping}` row format uses. */
export function rowFormatColumns(format: string): string[] {
  return [...format.matchAll(ROW_FORMAT)].map((m) => m[1] as string);
}

function escaped(v: unknown, how: string): string {
  const text = valueText(v);
  switch (how) {
    case 'Raw':
    case 'None':
      return text;
    case 'JSON':
      return typeof v === 'string' ? JSON.stringify(v) : (stringify(v) ?? 'null');
    case 'Quoted':
      return typeof v === 'string' ? `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : text;
    case 'CSV':
      return typeof v === 'string' ? `"${v.replace(/"/g, '""')}"` : text;
    default:
      return text.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n');
  }
}

/** Fill a `${col:Escaping}` row format from one row. */
export function fillRowFormat(format: string, row: RowObject): string {
  return format.replace(ROW_FORMAT, (_, name: string, how: string | undefined) =>
    escaped(row[name], how ?? 'Escaped'),
  );
}
