/** Request-body schemas shared by the view and materialized-view routes (one contract, two paths). */

/** A view's name: a letter, then letters, digits and `_`, 64 at most. */
export const VIEW_NAME = { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_]{0,63}$' } as const;

/** Fields a create body of either route carries (views add `materialized`). */
export const VIEW_CREATE_PROPERTIES = {
  name: VIEW_NAME,
  query: { type: 'string', minLength: 1 },
  description: { type: 'string' },
  target_stream: { type: 'string' },
  ttl_expression: { type: 'string' },
  logstore_retention_bytes: { type: 'integer' },
  logstore_retention_ms: { type: 'integer' },
} as const;

/** A PATCH body of either route. */
export const VIEW_UPDATE_BODY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    description: { type: 'string' },
    query: { type: 'string', minLength: 1 },
    ttl_expression: { type: 'string' },
    logstore_retention_bytes: { type: 'integer' },
    logstore_retention_ms: { type: 'integer' },
  },
} as const;

/** The fields of a PATCH body of either route that change a materialized view. */
export interface ViewUpdateFields {
  description?: string;
  ttl_expression?: string;
  logstore_retention_bytes?: number;
  logstore_retention_ms?: number;
}

/** A PATCH body as the patch `MaterializedViews.update` takes (absent fields stay as they are). */
export function materializedViewPatch(body: ViewUpdateFields): {
  description?: string;
  ttl?: string;
  logstoreRetentionBytes?: number;
  logstoreRetentionMs?: number;
} {
  return {
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.ttl_expression !== undefined ? { ttl: body.ttl_expression } : {}),
    ...(body.logstore_retention_bytes !== undefined
      ? { logstoreRetentionBytes: body.logstore_retention_bytes }
      : {}),
    ...(body.logstore_retention_ms !== undefined ? { logstoreRetentionMs: body.logstore_retention_ms } : {}),
  };
}
