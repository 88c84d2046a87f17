import { type StreamDefinition, TP_SN } from './stream-definition.ts';
import { compileValueCheck, type ValueCheck } from './value-checks.ts';

export type ColumnRule =
  | { readonly name: string; readonly writable: true; readonly nullable: boolean; readonly check: ValueCheck }
  | { readonly name: string; readonly writable: false; readonly reason: string };

/**
 * What ingest needs to know about a stream's columns, compiled once per definition: which columns
 * can be written and the value check of each.
 *
 * "Required" (README.md, "Validation"): no column of a stream is required. A column a row does not
 * give (or gives as null when the column is not nullable) takes its DEFAULT expression, or the
 * type's default value (0, '', 1970-01-01...) as in ClickHouse. Producers that need columns to be
 * present (the elastic input's `_raw`, `_index`, `_id`) name them in `requiredColumns` of the ingest.
 */
export class StreamSchema {
  private readonly rules = new Map<string, ColumnRule>();

  constructor(readonly definition: StreamDefinition) {
    for (const c of definition.columns) {
      if (c.alias) this.rules.set(c.name, { name: c.name, writable: false, reason: 'it is an ALIAS column' });
      else {
        const nullable = c.engineType.startsWith('Nullable(');
        this.rules.set(c.name, {
          name: c.name,
          writable: true,
          nullable,
          check: compileValueCheck(c.engineType),
        });
      }
    }
    this.rules.set(TP_SN, {
      name: TP_SN,
      writable: false,
      reason: 'sequence numbers are assigned at ingest',
    });
  }

  /** The stream's name as error messages show it. */
  get streamName(): string {
    const d = this.definition;
    return d.db === 'default' ? d.name : `${d.db}.${d.name}`;
  }

  rule(column: string): ColumnRule | undefined {
    return this.rules.get(column);
  }
}
