import { err, toTributaryError } from '../../errors/tributary-error.ts';
import type { Logger } from '../../log/logger.ts';
import type { BulkSink } from './elastic/bulk-sink.ts';
import { ElasticListener } from './elastic/elastic-listener.ts';
import type { InputStats } from './input-counters.ts';
import type { InputDefinition } from './input-definition.ts';

/** One input as SHOW INPUTS and the topology show it. */
export interface InputStatus {
  name: string;
  type: InputDefinition['type'];
  target_stream: string;
  listen_host: string;
  /** The port configured (0 = any free port). */
  tcp_port: number;
  /** The port actually listened on, null when not listening. */
  bound_port: number | null;
  /** `failed`: it could not listen when restored after a restart (see `stats.last_error`). */
  status: 'running' | 'failed';
  started_at: string | null;
  comment: string | null;
  stats: InputStats;
}

interface Entry {
  definition: InputDefinition;
  listener: ElasticListener | undefined;
  startedAt: string | null;
  failure: { message: string; at: string } | null;
}

export interface RunningInputsOptions {
  logger?: Logger;
  /** Per input: bulk requests handled at once before a 429 (default 64). */
  maxConcurrentBulks?: number;
}

const NO_TRAFFIC: InputStats = {
  docs_accepted: 0,
  docs_rejected: 0,
  bytes_received: 0,
  requests: 0,
  bulk_requests: 0,
  failed_requests: 0,
  last_error: null,
};

/**
 * The inputs of this process: starts a listener per definition, stops it, and reports status and
 * counters. CREATE INPUT calls `start` before writing the catalog (a port in use throws
 * INPUT_PORT_IN_USE and leaves nothing behind); start-up calls `restore` with the catalog's
 * definitions (failures are kept as `failed` entries, not thrown); DROP INPUT calls `stop`.
 */
export class RunningInputs {
  private readonly entries = new Map<string, Entry>();
  private readonly starting = new Set<string>();

  constructor(private readonly options: RunningInputsOptions = {}) {}

  async start(definition: InputDefinition, sink: BulkSink): Promise<InputStatus> {
    const existing = this.entries.get(definition.name);
    if (existing?.listener || this.starting.has(definition.name))
      throw err('RESOURCE_ALREADY_EXISTS', { kind: 'Input', name: definition.name });
    const listener = this.listenerFor(definition, sink);
    this.starting.add(definition.name);
    try {
      await listener.start();
    } finally {
      this.starting.delete(definition.name);
    }
    const entry: Entry = { definition, listener, startedAt: new Date().toISOString(), failure: null };
    this.entries.set(definition.name, entry);
    this.options.logger?.info({ input: definition.name, address: listener.address() }, 'input listening');
    return this.statusOf(entry);
  }

  /** Start every input of the catalog; one that cannot listen is kept as `failed`. */
  async restore(
    definitions: readonly InputDefinition[],
    sinkFor: (d: InputDefinition) => BulkSink,
  ): Promise<InputStatus[]> {
    const out: InputStatus[] = [];
    for (const definition of definitions) {
      try {
        out.push(await this.start(definition, sinkFor(definition)));
      } catch (e) {
        const failure = { message: toTributaryError(e).message, at: new Date().toISOString() };
        const entry: Entry = { definition, listener: undefined, startedAt: null, failure };
        this.entries.set(definition.name, entry);
        this.options.logger?.warn(
          { input: definition.name, reason: failure.message },
          'input failed to listen',
        );
        out.push(this.statusOf(entry));
      }
    }
    return out;
  }

  /** Stop an input and forget it. */
  async stop(name: string): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) throw err('RESOURCE_NOT_FOUND', { kind: 'Input', name });
    this.entries.delete(name);
    await entry.listener?.stop();
  }

  async stopAll(): Promise<void> {
    const names = [...this.entries.keys()];
    await Promise.all(names.map((n) => this.stop(n)));
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  status(name: string): InputStatus | undefined {
    const entry = this.entries.get(name);
    return entry && this.statusOf(entry);
  }

  list(): InputStatus[] {
    return [...this.entries.values()]
      .map((e) => this.statusOf(e))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  private listenerFor(definition: InputDefinition, sink: BulkSink): ElasticListener {
    switch (definition.type) {
      case 'elastic':
        return new ElasticListener({
          definition,
          sink,
          ...(this.options.logger ? { logger: this.options.logger } : {}),
          ...(this.options.maxConcurrentBulks ? { maxConcurrentBulks: this.options.maxConcurrentBulks } : {}),
        });
    }
  }

  private statusOf(entry: Entry): InputStatus {
    const d = entry.definition;
    const stats = entry.listener ? entry.listener.stats() : { ...NO_TRAFFIC, last_error: entry.failure };
    return {
      name: d.name,
      type: d.type,
      target_stream: d.target_stream,
      listen_host: d.listen_host,
      tcp_port: d.tcp_port,
      bound_port: entry.listener?.address()?.port ?? null,
      status: entry.listener ? 'running' : 'failed',
      started_at: entry.startedAt,
      comment: d.comment ?? null,
      stats,
    };
  }
}
