import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine } from '../../engine/engine.ts';
import { err } from '../../errors/tributary-error.ts';
import {
  checkpointsDir,
  FileCheckpointStore,
  isValidOwnerId,
} from '../../streaming/checkpoint/file-checkpoint-store.ts';

/** What RECOVER needs to run a subscribed query again, beside its checkpoint. */
export interface SubscriptionRecord {
  /** The SELECT of `SUBSCRIBE TO <select>`, as the client wrote it. */
  readonly sql: string;
  readonly checkpointIntervalMs: number;
  readonly createdAt: string;
  readonly createdBy: string;
}

const RECORD_FILE = 'subscription.json';
/** The delete mark UNSUBSCRIBE leaves in the query's directory: `{"unsubscribedAt": <ms>}`. */
const UNSUBSCRIBED_FILE = 'unsubscribed.json';
/** How long an unsubscribed query's mark stays (Proton's `checkpoint.delete_grace_interval`). */
export const UNSUBSCRIBE_GRACE_MS = 60_000;

/**
 * Proton's checkpointed queries (SUBSCRIBE / RECOVER / UNSUBSCRIBE): each subscribed query owns a
 * FileCheckpointStore named after its query id, `<dataDir>/checkpoints/<query id>/`, with its
 * SELECT in `subscription.json`. Keeps which subscribed queries run, so RECOVER refuses a query
 * still running and UNSUBSCRIBE stops it before removing its checkpoints. As in Proton, UNSUBSCRIBE
 * leaves a delete mark for a grace period, during which RECOVER answers QUERY_WAS_CANCELLED (394)
 * rather than "not found"; the mark goes once the grace period is over.
 */
export class Subscriptions {
  private readonly running = new Map<string, () => Promise<void>>();

  constructor(
    private readonly engine: Engine,
    private readonly dataDir: string,
  ) {}

  store(id: string): FileCheckpointStore {
    return new FileCheckpointStore(this.engine, this.dataDir, id);
  }

  /** Record a new subscription (before its query runs). */
  async create(id: string, record: SubscriptionRecord): Promise<void> {
    const dir = join(checkpointsDir(this.dataDir), id);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, RECORD_FILE);
    const fh = await open(`${file}.tmp`, 'w', 0o600);
    try {
      await fh.writeFile(JSON.stringify(record));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(`${file}.tmp`, file);
  }

  /**
   * The subscription `id`; CHECKPOINT_NOT_FOUND when there is none, RECOVER_UNSUBSCRIBED when it was
   * unsubscribed less than the grace period ago.
   */
  async get(id: string): Promise<SubscriptionRecord> {
    if (!isValidOwnerId(id)) throw err('CHECKPOINT_NOT_FOUND', { id });
    if (await this.isUnsubscribed(id)) throw err('RECOVER_UNSUBSCRIBED', { id });
    try {
      return JSON.parse(await readFile(join(checkpointsDir(this.dataDir), id, RECORD_FILE), 'utf8'));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw err('CHECKPOINT_NOT_FOUND', { id });
      throw err('RECOVER_CHECKPOINT_FAILED', { id, detail: (e as Error).message });
    }
  }

  isRunning(id: string): boolean {
    return this.running.has(id);
  }

  /** A subscribed query started; `stop` cancels it and resolves once it has ended. */
  started(id: string, stop: () => Promise<void>): void {
    if (this.running.has(id)) throw err('QUERY_ALREADY_RUNNING', { id });
    this.running.set(id, stop);
  }

  ended(id: string, stop: () => Promise<void>): void {
    if (this.running.get(id) === stop) this.running.delete(id);
  }

  /**
   * True while `id` carries UNSUBSCRIBE's delete mark; a mark older than the grace period is
   * removed with its directory (also one left by an earlier run of the server).
   */
  async isUnsubscribed(id: string): Promise<boolean> {
    if (!isValidOwnerId(id)) return false;
    const dir = join(checkpointsDir(this.dataDir), id);
    let at: number;
    try {
      at = Number(JSON.parse(await readFile(join(dir, UNSUBSCRIBED_FILE), 'utf8')).unsubscribedAt);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
      at = 0; // an unreadable mark is an old one
    }
    if (Number.isFinite(at) && Date.now() - at < UNSUBSCRIBE_GRACE_MS) return true;
    await rm(dir, { recursive: true, force: true });
    return false;
  }

  /**
   * UNSUBSCRIBE: stop the query if it runs, remove its checkpoints and record, and leave the delete
   * mark (removed after the grace period). Unsubscribing a marked query again does nothing.
   */
  async remove(id: string): Promise<void> {
    if (await this.isUnsubscribed(id)) return;
    await this.get(id);
    await this.running.get(id)?.();
    await this.store(id).destroy();
    const dir = join(checkpointsDir(this.dataDir), id);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(join(dir, UNSUBSCRIBED_FILE), JSON.stringify({ unsubscribedAt: Date.now() }), {
      mode: 0o600,
    });
    const sweep = setTimeout(
      () => void this.isUnsubscribed(id).catch(() => undefined),
      UNSUBSCRIBE_GRACE_MS + 1_000,
    );
    sweep.unref();
  }
}
