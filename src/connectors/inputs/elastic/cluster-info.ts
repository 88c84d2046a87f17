import { createHash } from 'node:crypto';

/**
 * The cluster an elastic input pretends to be, for the start-up calls of log shippers: one node,
 * green, a basic active license, the configured version. The cluster UUID is derived from the
 * input's name, so it is stable across restarts (Filebeat's monitoring reads it).
 */
export class ClusterInfo {
  readonly clusterName = 'tributary';
  readonly nodeName = 'tributary';
  readonly clusterUuid: string;
  readonly nodeId: string;
  private readonly buildDate = '2024-12-11T12:08:05.663969764Z';

  constructor(
    inputName: string,
    readonly version: string,
  ) {
    const h = createHash('sha256').update(`tributary-elastic-input:${inputName}`).digest();
    this.clusterUuid = h.subarray(0, 16).toString('base64url').slice(0, 22);
    this.nodeId = h.subarray(16, 32).toString('base64url').slice(0, 22);
  }

  private get major(): number {
    return Number(this.version.split('.')[0]);
  }

  /** `GET /` (RootNodeInfoResponse). */
  root(): object {
    const major = this.major;
    return {
      name: this.nodeName,
      cluster_name: this.clusterName,
      cluster_uuid: this.clusterUuid,
      version: {
        number: this.version,
        build_flavor: 'default',
        build_type: 'docker',
        build_hash: '0000000000000000000000000000000000000000',
        build_date: this.buildDate,
        build_snapshot: false,
        lucene_version: major >= 9 ? '10.1.0' : major === 8 ? '9.12.0' : '8.11.1',
        minimum_wire_compatibility_version: major >= 9 ? '8.18.0' : major === 8 ? '7.17.0' : '6.8.0',
        minimum_index_compatibility_version: major >= 9 ? '8.0.0' : major === 8 ? '7.0.0' : '6.0.0-beta1',
      },
      tagline: 'You Know, for Search',
    };
  }

  /** `GET /_license`: Beats need a known type and status, Logstash an `active` status. */
  license(): object {
    return {
      license: {
        status: 'active',
        uid: this.clusterUuid,
        type: 'basic',
        issue_date: '2024-01-01T00:00:00.000Z',
        issue_date_in_millis: 1704067200000,
        max_nodes: 1000,
        max_resource_units: null,
        issued_to: this.clusterName,
        issuer: 'elasticsearch',
        start_date_in_millis: -1,
      },
    };
  }

  /** `GET /_xpack` (Beats 6.x/7.x). */
  xpack(): object {
    return {
      build: { hash: '0000000000000000000000000000000000000000', date: this.buildDate },
      license: { uid: this.clusterUuid, type: 'basic', mode: 'basic', status: 'active' },
      features: {},
      tagline: 'You know, for X',
    };
  }

  /** `GET /_cluster/health` (Vector's health check needs a 200). */
  health(): object {
    return {
      cluster_name: this.clusterName,
      status: 'green',
      timed_out: false,
      number_of_nodes: 1,
      number_of_data_nodes: 1,
      active_primary_shards: 0,
      active_shards: 0,
      relocating_shards: 0,
      initializing_shards: 0,
      unassigned_shards: 0,
      delayed_unassigned_shards: 0,
      number_of_pending_tasks: 0,
      number_of_in_flight_fetch: 0,
      task_max_waiting_in_queue_millis: 0,
      active_shards_percent_as_number: 100.0,
    };
  }

  /** `GET /_nodes[/...]` (sniffing): this one node, published at the address the client used. */
  nodes(publishAddress: string): object {
    const host = publishAddress.replace(/:\d+$/, '');
    return {
      _nodes: { total: 1, successful: 1, failed: 0 },
      cluster_name: this.clusterName,
      nodes: {
        [this.nodeId]: {
          name: this.nodeName,
          transport_address: publishAddress,
          host,
          ip: host,
          version: this.version,
          roles: ['data', 'ingest', 'master'],
          http: { bound_address: [publishAddress], publish_address: publishAddress },
        },
      },
    };
  }
}
