import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { READ } from '../access.ts';
import { CpuUsage } from '../cpu-usage.ts';
import type { Services } from '../services.ts';

/**
 * `GET /v1beta2/cluster`: the node list. Tributary runs as one node holding both roles.
 * `boot_timestamp` and `timestamp` are epoch seconds; `cpu_usage` is the process's share of the
 * machine's CPU in percent.
 */
export function clusterRoutes(app: FastifyInstance, s: Services): void {
  const cpu = new CpuUsage();
  app.get('/v1beta2/cluster', { config: READ }, async () => {
    let online = true;
    try {
      await s.engine.ping();
    } catch {
      online = false;
    }
    return [
      {
        id: 1,
        advertised_host: hostname(),
        boot_timestamp: Math.floor(s.bootedAt / 1000),
        timestamp: Math.floor(Date.now() / 1000),
        cpu_usage: cpu.percent(),
        roles: ['Metadata', 'Data'],
        state: online ? 'Online' : 'Offline',
        total_mvs: s.mvs.list().length,
        // Every shard of every stream lives on this one node.
        total_shards: s.streams.list().reduce((n, r) => n + r.value.shards, 0),
      },
    ];
  });
}
