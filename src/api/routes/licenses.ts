import type { FastifyInstance } from 'fastify';
import { err } from '../../errors/tributary-error.ts';
import { PUBLIC } from '../access.ts';
import type { Services } from '../services.ts';

/**
 * License routes, open without credentials as in the contract. Tributary is open source and needs
 * no license: the list shows that one perpetual entitlement, validations are empty, and uploads or
 * trials are refused with an explanation instead of pretending to succeed.
 */
export function licenseRoutes(app: FastifyInstance, s: Services): void {
  const open = { config: PUBLIC };
  app.get('/v1beta2/licenses', open, async (_request, reply) =>
    reply.status(201).send([
      {
        created_by: s.version.product,
        issued: new Date(s.version.buildTime).toISOString(),
        expiry: '',
        is_trial: false,
        entitlements: [
          { code: 'open_source', created: s.version.buildTime, updated: s.version.buildTime, metadata: {} },
        ],
      },
    ]),
  );
  app.get('/v1beta2/licenses/validations', open, async () => []);
  app.get('/v1beta2/licenses/usage', open, async () => []);
  const refuse = async () => {
    throw err('INVALID_REQUEST', { detail: `${s.version.product} is open source and needs no license` });
  };
  app.post('/v1beta2/licenses', open, refuse);
  app.post('/v1beta2/licenses/trial', open, refuse);
}
