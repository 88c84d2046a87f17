import type { Actor } from '../catalog/audit.ts';
import type { CatalogRecord } from '../catalog/catalog.ts';
import type { UdfArgument, UdfDefinition } from './udf-definition.ts';

/** What GET answers for a remote function's secret. */
export const MASKED_SECRET = '******';

/** The contract's `UserDefinedFunction` (operations 67-68). */
export interface UserDefinedFunction {
  name: string;
  description: string;
  type: 'javascript' | 'remote' | 'sql';
  return_type: string;
  arguments: UdfArgument[];
  is_aggregation: boolean;
  source: string;
  url: string;
  auth_method: string;
  auth_context: { auth_header: string; auth_value: string };
  execution_timeout: number;
  created_at: number;
  created_by: string;
  last_modified_at: number;
  last_modified_by: string;
  last_updated_at: string;
  last_updated_by: Actor;
}

/** `YYYY-MM-DD HH:MM:SS` (UTC) as epoch milliseconds. */
const epochMs = (at: string) => Date.parse(`${at.replace(' ', 'T')}Z`);

/** A catalog record as the API shows it: every field present, the auth key masked. */
export function udfResource(r: CatalogRecord<UdfDefinition>): UserDefinedFunction {
  const d = r.value;
  return {
    name: d.name,
    description: d.description,
    type: d.type,
    return_type: d.return_type,
    arguments: d.arguments,
    is_aggregation: d.is_aggregation,
    source: d.source ?? '',
    url: d.url ?? '',
    auth_method: d.type === 'remote' ? (d.auth_method ?? 'none') : '',
    auth_context: {
      auth_header: d.auth_header ?? '',
      auth_value: d.auth_header ? MASKED_SECRET : '',
    },
    execution_timeout: d.execution_timeout ?? 0,
    created_at: epochMs(r.audit.created_at),
    created_by: r.audit.created_by.name,
    last_modified_at: epochMs(r.audit.last_updated_at),
    last_modified_by: r.audit.last_updated_by.name,
    last_updated_at: r.audit.last_updated_at,
    last_updated_by: r.audit.last_updated_by,
  };
}

/**
 * The answer of create and update (the create document's `UDF`): the name as `id`, audit times as
 * strings and actors as objects, the auth key masked.
 */
export function createdUdf(r: CatalogRecord<UdfDefinition>) {
  const d = r.value;
  return {
    id: d.name,
    name: d.name,
    description: d.description,
    type: d.type,
    return_type: d.return_type,
    arguments: d.arguments,
    is_aggregation: d.is_aggregation,
    source: d.source ?? '',
    url: d.url ?? '',
    auth_method: d.type === 'remote' ? (d.auth_method ?? 'none') : '',
    auth_context: { key_name: d.auth_header ?? '', key_value: d.auth_header ? MASKED_SECRET : '' },
    execution_timeout: d.execution_timeout ?? 0,
    ...r.audit,
  };
}
