import type { FastifyInstance } from 'fastify';
import { ROLES, type Role } from '../../catalog/user-store.ts';
import { err } from '../../errors/tributary-error.ts';
import { ADMIN, READ } from '../access.ts';
import { type Authenticator, actorOfRequest } from '../auth.ts';
import type { Services } from '../services.ts';

const USERNAME = { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_.@-]{0,63}$' } as const;
const PASSWORD = { type: 'string', minLength: 8, maxLength: 1024 } as const;
const ROLE = { type: 'string', enum: ROLES } as const;

const createUser = {
  body: {
    type: 'object',
    required: ['username', 'password'],
    additionalProperties: false,
    properties: { username: USERNAME, password: PASSWORD, role: ROLE },
  },
} as const;

const updateUser = {
  params: { type: 'object', properties: { name: { type: 'string' } } },
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { password: PASSWORD, role: ROLE },
  },
} as const;

const createKey = {
  body: {
    type: 'object',
    additionalProperties: false,
    properties: { name: { type: 'string', maxLength: 128 }, username: USERNAME },
  },
} as const;

/** Users (list, create, get, update, delete), roles, and API keys. */
export function userRoutes(app: FastifyInstance, s: Services, auth: Authenticator): void {
  app.get('/v1beta2/users', { config: READ }, async () => s.users.list());

  app.post('/v1beta2/users', { schema: createUser, config: ADMIN }, async (request, reply) => {
    const body = request.body as { username: string; password: string; role?: Role };
    await s.users.create(body.username, body.password, body.role ?? 'read_only', actorOfRequest(request));
    auth.invalidate();
    return reply.status(201).send();
  });

  app.get('/v1beta2/users/:name', { config: READ }, async (request) => {
    const { name } = request.params as { name: string };
    const user = s.users.get(name);
    if (!user) throw err('USER_NOT_FOUND', { name });
    return user;
  });

  app.patch('/v1beta2/users/:name', { schema: updateUser, config: ADMIN }, async (request, reply) => {
    const { name } = request.params as { name: string };
    await s.users.update(name, request.body as { password?: string; role?: Role }, actorOfRequest(request));
    auth.invalidate();
    return reply.status(200).send();
  });

  app.delete('/v1beta2/users/:name', { config: ADMIN }, async (request, reply) => {
    const { name } = request.params as { name: string };
    await s.users.delete(name);
    auth.invalidate();
    return reply.status(204).send();
  });

  app.get('/v1beta2/roles', { config: READ }, async () => ROLES);

  // API keys, the contract's Cloud routes: a key acts as the user it belongs to.
  app.get('/v1beta2/auth/api_keys', { config: READ }, async (request) =>
    s.users.listApiKeys(request.user.role === 'admin' ? undefined : request.user.username),
  );

  app.post('/v1beta2/auth/api_keys', { schema: createKey, config: ADMIN }, async (request, reply) => {
    const body = (request.body ?? {}) as { name?: string; username?: string };
    const username = body.username ?? request.user.username;
    const created = await s.users.createApiKey(username, body.name ?? '', actorOfRequest(request));
    return reply.status(201).send(created);
  });

  app.delete('/v1beta2/auth/api_keys/:id', { config: ADMIN }, async (request, reply) => {
    const { id } = request.params as { id: string };
    if (!(await s.users.deleteApiKey(id))) throw err('RESOURCE_NOT_FOUND', { kind: 'API key', name: id });
    auth.invalidate();
    return reply.status(204).send();
  });
}
