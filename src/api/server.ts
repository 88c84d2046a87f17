import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { installAuth } from './auth.ts';
import { installEmptyJsonBody } from './empty-json-body.ts';
import { frameworkErrorHandler, httpClientErrorHandler, installErrorHandlers } from './error-handler.ts';
import { installOptionalNulls } from './optional-nulls.ts';
import { installRequestId, requestIdOf } from './request-id.ts';
import { BODY_LIMIT, PATH_SEGMENT_LIMIT } from './request-limits.ts';
import { deferredChildLogger } from './request-logger.ts';
import { clusterRoutes } from './routes/cluster.ts';
import { dashboardRoutes } from './routes/dashboards.ts';
import { dictionaryRoutes } from './routes/dictionaries.ts';
import { execRoutes } from './routes/exec.ts';
import { externalStreamRoutes } from './routes/external-streams.ts';
import { externalTableRoutes } from './routes/external-tables.ts';
import { infoRoutes } from './routes/info.ts';
import { licenseRoutes } from './routes/licenses.ts';
import { materializedViewRoutes } from './routes/materialized-views.ts';
import { pipelineRoutes } from './routes/pipelines.ts';
import { queryRoutes } from './routes/queries.ts';
import { savedQueryRoutes } from './routes/saved-queries.ts';
import { sinkRoutes } from './routes/sinks.ts';
import { sourceRoutes } from './routes/sources.ts';
import { sqlToolRoutes } from './routes/sql-tools.ts';
import { streamRoutes } from './routes/streams.ts';
import { topologyRoutes } from './routes/topology.ts';
import { udfRoutes } from './routes/udfs.ts';
import { userRoutes } from './routes/users.ts';
import { viewRoutes } from './routes/views.ts';
import { workspaceRoutes } from './routes/workspace.ts';
import type { Services } from './services.ts';

/** The base path of every route: the self-hosted workspace is always `default`. */
export const API_PREFIX = '/default/api';

/** Build the HTTP server (not yet listening). */
export function buildServer(services: Services): FastifyInstance {
  const app = Fastify({
    // Fastify's own lines (per request, "listening at") are noise at info; keep its warnings.
    // At debug and trace the API logs as the rest does (refused requests, with their reqId).
    loggerInstance: services.logger.child(
      { component: 'api' },
      {
        level:
          services.logger.levelVal > 40 || services.logger.levelVal < 30 ? services.logger.level : 'warn',
      },
    ) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // request.log is made when a request first logs (most never do): src/api/request-logger.ts.
    childLoggerFactory: deferredChildLogger,
    bodyLimit: BODY_LIMIT,
    // The caller's valid `x-request-id`, else a new one; answered on every response.
    requestIdHeader: false,
    genReqId: requestIdOf,
    routerOptions: { maxParamLength: PATH_SEGMENT_LIMIT },
    // Errors raised before a route runs (bad URL, a path segment too long, headers too large,
    // a malformed request) answer the same {code, message, system} bodies as every other error.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler: httpClientErrorHandler,
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false, useDefaults: true },
    },
  });
  installRequestId(app);
  installErrorHandlers(app);
  installEmptyJsonBody(app);
  installOptionalNulls(app);
  // Bodies the JSON parser does not handle arrive as raw bytes; routes that accept them say so.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  const auth = installAuth(app, services.users);
  void app.register(
    async (api) => {
      infoRoutes(api, services);
      clusterRoutes(api, services);
      userRoutes(api, services, auth);
      workspaceRoutes(api, services);
      licenseRoutes(api, services);
      queryRoutes(api, services);
      execRoutes(api, services);
      streamRoutes(api, services);
      topologyRoutes(api, services);
      sqlToolRoutes(api, services);
      viewRoutes(api, services);
      materializedViewRoutes(api, services);
      dashboardRoutes(api, services);
      savedQueryRoutes(api, services);
      pipelineRoutes(api, services);
      sourceRoutes(api, services);
      sinkRoutes(api, services);
      externalStreamRoutes(api, services);
      dictionaryRoutes(api, services);
      udfRoutes(api, services);
      externalTableRoutes(api, services);
    },
    { prefix: API_PREFIX },
  );
  return app;
}
