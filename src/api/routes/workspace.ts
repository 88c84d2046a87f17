import type { FastifyInstance } from 'fastify';
import { ADMIN, READ } from '../access.ts';
import { actorOfRequest } from '../auth.ts';
import type { Services } from '../services.ts';

const updateWorkspace = {
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      settings: {
        type: 'object',
        additionalProperties: false,
        properties: { enabled_user_tracking: { type: 'boolean' }, name: { type: 'string' } },
      },
    },
  },
} as const;

/** The workspace and its settings. */
export function workspaceRoutes(app: FastifyInstance, s: Services): void {
  app.get('/v1beta2/workspace', { config: READ }, async () => s.workspace.get());

  app.patch('/v1beta2/workspace', { schema: updateWorkspace, config: ADMIN }, async (request, reply) => {
    // `settings` is optional in the contract: without it (or null) nothing changes.
    const settings =
      (request.body as { settings?: { enabled_user_tracking?: boolean } } | undefined)?.settings ?? {};
    await s.workspace.updateSettings(
      settings.enabled_user_tracking === undefined
        ? {}
        : { enabled_user_tracking: settings.enabled_user_tracking },
      actorOfRequest(request),
    );
    return reply.status(204).send();
  });
}
