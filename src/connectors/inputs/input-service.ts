import type { Actor } from '../../catalog/audit.ts';
import type { Catalog } from '../../catalog/catalog.ts';
import { err } from '../../errors/tributary-error.ts';
import type { Logger } from '../../log/logger.ts';
import type { StreamStore } from '../../stream/stream-store.ts';
import type { InputDefinition } from './input-definition.ts';
import { type InputRecord, InputStore } from './input-store.ts';
import type { InputStatus, RunningInputs } from './running-inputs.ts';
import { StreamBulkSink } from './stream-bulk-sink.ts';
import { checkTargetStream, resolveTargetStream, type TargetStream } from './target-stream.ts';

export interface InputServiceOptions {
  catalog: Catalog;
  streams: StreamStore;
  running: RunningInputs;
  defaultDatabase: string;
  logger?: Logger;
}

/**
 * The inputs of the product: definitions in the catalog (InputStore), listeners in this process
 * (RunningInputs), rows into streams (StreamBulkSink). CREATE INPUT checks the target, listens, and
 * only then stores the definition; DROP INPUT forgets it and stops the listener; start-up restores
 * every stored input; shutdown stops them all.
 */
export class InputService {
  readonly store: InputStore;
  readonly running: RunningInputs;
  private readonly streams: StreamStore;
  private readonly defaultDb: string;
  private readonly logger: Logger | undefined;

  constructor(options: InputServiceOptions) {
    this.store = new InputStore(options.catalog);
    this.running = options.running;
    this.streams = options.streams;
    this.defaultDb = options.defaultDatabase;
    this.logger = options.logger;
  }

  /** The stream a definition writes to. */
  targetOf(definition: InputDefinition): TargetStream {
    return resolveTargetStream(definition.target_stream, this.streams, this.defaultDb);
  }

  /** Throws INPUT_BAD_TARGET unless the definition's target stream exists with the right columns. */
  checkTarget(definition: InputDefinition): TargetStream {
    const target = this.targetOf(definition);
    checkTargetStream(definition.name, target, this.streams);
    return target;
  }

  /**
   * CREATE INPUT: answers false (and does nothing) when it exists and `ifNotExists`. A port in use
   * (INPUT_PORT_IN_USE) or any failure to listen or to store leaves no listener and no catalog entry.
   */
  async create(
    definition: InputDefinition,
    actor: Actor,
    options: { ifNotExists?: boolean } = {},
  ): Promise<boolean> {
    if (this.store.get(definition.name) || this.running.has(definition.name)) {
      if (options.ifNotExists) return false;
      throw err('RESOURCE_ALREADY_EXISTS', { kind: 'Input', name: definition.name });
    }
    const target = this.checkTarget(definition);
    await this.running.start(definition, this.sinkTo(target));
    try {
      await this.store.create(definition, actor);
    } catch (e) {
      await this.running.stop(definition.name).catch(() => undefined);
      throw e;
    }
    return true;
  }

  /** DROP INPUT: answers false when it does not exist and `ifExists`, else RESOURCE_NOT_FOUND. */
  async drop(name: string, options: { ifExists?: boolean } = {}): Promise<boolean> {
    const stored = this.store.get(name) !== undefined;
    if (!stored && !this.running.has(name)) {
      if (options.ifExists) return false;
      throw err('RESOURCE_NOT_FOUND', { kind: 'Input', name });
    }
    if (stored) await this.store.delete(name);
    if (this.running.has(name)) await this.running.stop(name);
    return true;
  }

  /** Start every input of the catalog; one that cannot listen stays listed as `failed`. */
  async restore(): Promise<InputStatus[]> {
    const definitions = this.store.list().map((r) => r.value);
    const out = await this.running.restore(definitions, (d) => this.sinkTo(this.targetOf(d)));
    for (const s of out) {
      if (s.status === 'failed') continue;
      try {
        this.checkTarget(this.store.get(s.name)!.value);
      } catch (e) {
        this.logger?.warn(
          { input: s.name, reason: (e as Error).message },
          'input target stream does not fit',
        );
      }
    }
    return out;
  }

  definition(name: string): InputRecord | undefined {
    return this.store.get(name);
  }

  /** SHOW INPUTS: every input, by name. */
  list(): InputStatus[] {
    return this.running.list();
  }

  /** Names of the inputs writing into stream `db.name`. */
  writersOf(db: string, name: string): string[] {
    return this.store
      .list()
      .filter((r) => {
        const t = this.targetOf(r.value);
        return t.db === db && t.name === name;
      })
      .map((r) => r.key);
  }

  /** Names of the inputs writing into any stream of `db`. */
  writersIn(db: string): string[] {
    return this.store
      .list()
      .filter((r) => this.targetOf(r.value).db === db)
      .map((r) => r.key);
  }

  /** Throws RESOURCE_IN_USE when an input writes into stream `db.name` (DROP STREAM, DELETE /streams). */
  assertNoWriters(db: string, name: string): void {
    const writers = this.writersOf(db, name);
    if (writers.length > 0)
      throw err('RESOURCE_IN_USE', {
        kind: 'Stream',
        name: db === 'default' ? name : `${db}.${name}`,
        users: `${writers.map((w) => `input ${w}`).join(', ')} (DROP INPUT first)`,
      });
  }

  /** Stop every listener (shutdown); the catalog keeps the definitions. */
  close(): Promise<void> {
    return this.running.stopAll();
  }

  private sinkTo(target: TargetStream): StreamBulkSink {
    return new StreamBulkSink(this.streams, target.db, target.name);
  }
}
