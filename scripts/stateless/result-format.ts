// A statement's result printed in the output format it asked for (`FORMAT X`, default
// TabSeparated), from the header and rows of Tributary's query events. Formats the runner cannot
// print raise UnsupportedFormat, naming them.

import { isLosslessNumber } from 'lossless-json';
import { parseProtonType } from '../conformance/proton-type.ts';
import { csvValue, escapeText, isNumericType, tsvValue, typeText } from './value-text.ts';

export interface ResultColumn {
  name: string;
  type: string;
}

export class UnsupportedFormat extends Error {
  constructor(readonly format: string) {
    super(`the runner does not print FORMAT ${format}`);
  }
}

/** The output format a statement asks for: its trailing `FORMAT name` (outside strings/comments). */
export function formatOf(code: string): string | undefined {
  const m = /\bFORMAT\s+([A-Za-z][A-Za-z0-9_]*)\s*$/i.exec(code);
  return m ? m[1] : undefined;
}

const WIDE_INT = /^u?int(64|128|256)$/;

/** JSON text of a value as the engine's JSON formats print it (64-bit integers quoted). */
function jsonValue(typeName: string, v: unknown): string {
  const t = parseProtonType(typeName);
  const inner = t.name === 'nullable' || t.name === 'low_cardinality' ? (t.types[0] ?? t) : t;
  if (v === null || v === undefined) return 'null';
  if (isLosslessNumber(v)) return WIDE_INT.test(inner.name) ? `"${v.toString()}"` : v.toString();
  if (typeof v === 'string') {
    if (isNumericType(inner) && !WIDE_INT.test(inner.name)) return /^-?(nan|inf)$/.test(v) ? 'null' : v;
    return JSON.stringify(v).replace(/\//g, '\\/');
  }
  if (Array.isArray(v)) {
    const el = inner.name === 'array' ? inner.types[0] : undefined;
    return `[${v.map((x, i) => jsonValue(el ? typeText(el) : typeText(inner.types[i]), x)).join(',')}]`;
  }
  if (typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${JSON.stringify(k)}:${jsonValue(typeText(inner.types[1]), x)}`)
      .join(',')}}`;
  }
  return String(v);
}

function lines(rows: string[]): string {
  return rows.map((r) => `${r}\n`).join('');
}

function vertical(columns: ResultColumn[], rows: unknown[][]): string {
  const width = Math.max(0, ...columns.map((c) => c.name.length));
  return rows
    .map((row, i) => {
      const head = `Row ${i + 1}:`;
      const fields = columns.map((c, j) => {
        const v = row[j];
        const text = v === null || v === undefined ? 'ᴺᵁᴸᴸ' : tsvValue(c.type, v, true);
        return `${`${c.name}:`.padEnd(width + 2)}${text}`;
      });
      return `${head}\n${'─'.repeat(head.length)}\n${fields.join('\n')}\n`;
    })
    .join('\n');
}

/** The text the engine prints for a result in `format` (case-insensitive; default TabSeparated). */
export function renderResult(format: string | undefined, columns: ResultColumn[], rows: unknown[][]): string {
  const f = (format ?? 'TabSeparated').toLowerCase();
  const tsvRow = (row: unknown[], raw: boolean) =>
    columns.map((c, i) => tsvValue(c.type, row[i], raw)).join('\t');
  const names = columns.map((c) => escapeText(c.name)).join('\t');
  const types = columns.map((c) => c.type).join('\t');
  switch (f) {
    case 'tabseparated':
    case 'tsv':
      return lines(rows.map((r) => tsvRow(r, false)));
    case 'tabseparatedraw':
    case 'tsvraw':
      return lines(rows.map((r) => tsvRow(r, true)));
    case 'tabseparatedwithnames':
    case 'tsvwithnames':
      return lines([names, ...rows.map((r) => tsvRow(r, false))]);
    case 'tabseparatedwithnamesandtypes':
    case 'tsvwithnamesandtypes':
      return lines([names, types, ...rows.map((r) => tsvRow(r, false))]);
    case 'csv':
      return lines(rows.map((r) => columns.map((c, i) => csvValue(c.type, r[i])).join(',')));
    case 'csvwithnames':
      return lines([
        columns.map((c) => `"${c.name.replace(/"/g, '""')}"`).join(','),
        ...rows.map((r) => columns.map((c, i) => csvValue(c.type, r[i])).join(',')),
      ]);
    case 'jsoneachrow':
      return lines(
        rows.map(
          (r) =>
            `{${columns.map((c, i) => `${JSON.stringify(c.name)}:${jsonValue(c.type, r[i])}`).join(',')}}`,
        ),
      );
    case 'jsoncompacteachrow':
      return lines(rows.map((r) => `[${columns.map((c, i) => jsonValue(c.type, r[i])).join(', ')}]`));
    case 'vertical':
      return vertical(columns, rows);
    case 'null':
      return '';
    default:
      throw new UnsupportedFormat(format ?? 'TabSeparated');
  }
}
