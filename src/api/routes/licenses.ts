import type { FastifyInstance } from 'fastify';
import { err } from '../../errors/tributary-error.ts';
import { MAX_LICENSE_FILE_BYTES } from '../../license/license-file.ts';
import { licenseView, type TrialRequest } from '../../license/license-store.ts';
import { usageFromCatalog } from '../../license/license-usage.ts';
import { validateLicenses } from '../../license/license-validations.ts';
import { PUBLIC } from '../access.ts';
import { formFields } from '../form-body.ts';
import type { Services } from '../services.ts';

/** An upload is a license file and a key, in a multipart or urlencoded form. */
const LICENSE_BODY_LIMIT = 2 * MAX_LICENSE_FILE_BYTES;
const MAX_KEY_BYTES = 1024;

const startTrial = {
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      userName: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_.@-]{0,63}$' },
      userEmail: { type: 'string', maxLength: 320 },
      password: { type: 'string', minLength: 8, maxLength: 1024 },
      allowTrack: { type: 'boolean' },
    },
  },
} as const;

function field(fields: Map<string, Buffer>, name: string, max: number): Buffer {
  const v = fields.get(name);
  if (v === undefined || v.length === 0) throw err('INVALID_FIELD', { field: name, detail: 'is required' });
  if (v.length > max) throw err('INVALID_FIELD', { field: name, detail: `is larger than ${max} bytes` });
  return v;
}

/**
 * License routes (operations 25-28 and usage), open without credentials as in the contract. A
 * license gates nothing: with none, the list shows the open-source entitlement as before.
 */
export function licenseRoutes(app: FastifyInstance, s: Services): void {
  const open = { config: PUBLIC };

  // The contract answers the list with 201.
  app.get('/v1beta2/licenses', open, async (_request, reply) => {
    const stored = s.licenses.list();
    if (stored.length > 0) return reply.status(201).send(stored.map(licenseView));
    return reply.status(201).send([
      {
        created_by: s.version.product,
        issued: new Date(s.version.buildTime).toISOString(),
        is_trial: false,
        entitlements: [
          { code: 'open_source', created: s.version.buildTime, updated: s.version.buildTime, metadata: {} },
        ],
      },
    ]);
  });

  app.post('/v1beta2/licenses', { ...open, bodyLimit: LICENSE_BODY_LIMIT }, async (request, reply) => {
    const fields = formFields(request.headers['content-type'], request.body);
    for (const name of fields.keys()) {
      if (name !== 'key' && name !== 'file')
        throw err('INVALID_FIELD', { field: name, detail: 'is not a known field' });
    }
    const key = field(fields, 'key', MAX_KEY_BYTES).toString('utf8');
    const file = field(fields, 'file', MAX_LICENSE_FILE_BYTES);
    await s.licenses.upload(file, key, 'anonymous');
    return reply.status(201).send();
  });

  app.post('/v1beta2/licenses/trial', { schema: startTrial, ...open }, async (request, reply) => {
    await s.licenses.startTrial((request.body ?? {}) as TrialRequest);
    return reply.status(201).send();
  });

  app.get('/v1beta2/licenses/validations', open, async () =>
    validateLicenses(s.licenses.list(), usageFromCatalog(s.catalog), s.clock()),
  );
  app.get('/v1beta2/licenses/usage', open, async () => []);
}
