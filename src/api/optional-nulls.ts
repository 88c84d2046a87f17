import type { FastifyInstance, preValidationHookHandler } from 'fastify';

interface ObjectSchema {
  type?: string | string[];
  nullable?: boolean;
  required?: readonly string[];
  properties?: Record<string, ObjectSchema>;
  items?: ObjectSchema;
}

function allowsNull(schema: ObjectSchema | undefined): boolean {
  if (!schema) return true;
  if (schema.nullable) return true;
  return Array.isArray(schema.type) ? schema.type.includes('null') : schema.type === 'null';
}

/**
 * Remove, in place, every property whose value is `null` where the schema says the property is
 * optional and does not take null: clients (the official SDKs among them) send every unset
 * optional field as `null`, which means "absent". Nested objects and arrays of objects are
 * walked the same way. A required field sent as null is left for validation to refuse by name.
 */
export function stripOptionalNulls(value: unknown, schema: ObjectSchema | undefined): void {
  if (!schema || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) stripOptionalNulls(item, schema.items);
    return;
  }
  const properties = schema.properties;
  if (!properties) return;
  const required = new Set(schema.required ?? []);
  const record = value as Record<string, unknown>;
  for (const [key, v] of Object.entries(record)) {
    const property = properties[key];
    if (v === null) {
      if (property && !required.has(key) && !allowsNull(property)) delete record[key];
    } else {
      stripOptionalNulls(v, property);
    }
  }
}

/**
 * Strip the optional nulls of every JSON body before the route's schema validates it: a
 * preValidation hook on each route with a body schema, the schema bound when the route is added
 * (install before any route). Routes without one (ingest: its body is bytes) run no hook at all.
 */
export function installOptionalNulls(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema?.body as ObjectSchema | undefined;
    if (!schema) return;
    // A callback hook, not an async one: no promise per request.
    const strip: preValidationHookHandler = (request, _reply, done) => {
      if (request.body && typeof request.body === 'object' && !Buffer.isBuffer(request.body))
        stripOptionalNulls(request.body, schema);
      done();
    };
    const own = route.preValidation === undefined ? [] : [route.preValidation].flat();
    route.preValidation = [strip, ...own];
  });
}
