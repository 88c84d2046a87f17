import type { FastifyInstance } from 'fastify';
import { PUBLIC } from '../access.ts';
import type { Services } from '../services.ts';

interface Component {
  version: string;
  commit: string;
  build_time: string;
  feature_flags: Record<string, unknown>;
}

/**
 * `GET /info`: the Versions shape. Tributary is one process, so the contract's four components
 * describe its parts: `proton` the SQL engine (embedded ClickHouse), `neutron` the REST API,
 * `orbit` the connectors, `axion` the streaming executor. 503 when the engine does not answer.
 */
export function infoRoutes(app: FastifyInstance, s: Services): void {
  app.get('/info', { config: PUBLIC }, async (_request, reply) => {
    const own = (flags: Record<string, unknown> = {}): Component => ({
      version: s.version.version,
      commit: s.version.commit,
      build_time: s.version.buildTime,
      feature_flags: flags,
    });
    let engineVersion = 'unknown';
    let up = true;
    try {
      engineVersion = (await s.engine.ping()).version;
    } catch {
      up = false;
    }
    const body = {
      axion: own(),
      neutron: own({ workspace: 'default', auth: ['basic', 'api_key'] }),
      orbit: own(),
      proton: {
        version: engineVersion,
        commit: s.version.commit,
        build_time: s.version.buildTime,
        feature_flags: { engine: 'chdb', chdb: s.version.chdb, available: up },
      },
      product_name: s.version.product,
      product_version: s.version.version,
    };
    return reply.status(up ? 200 : 503).send(body);
  });
}
