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
