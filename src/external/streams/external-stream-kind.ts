import type { Delivery, RetryBackoff } from '../../connectors/sinks/delivery.ts';
import { err } from '../../errors/tributary-error.ts';

/** A setting value of CREATE EXTERNAL STREAM ... SETTINGS, as written. */
export type SettingValue = string | number | boolean;

/** A column of an external stream (Proton type names). */
export interface ExternalColumn {
  readonly name: string;
  readonly type: string;
}

/** What a kind checks and knows about one external stream. */
export interface ExternalStreamShape {
  readonly columns: readonly ExternalColumn[];
  readonly settings: Readonly<Record<string, SettingValue>>;
}

/**
 * One kind of external stream (`type='http'`, later `log`, `timeplus`, ...). Each kind checks its
 * settings (a 400 naming the setting), says which settings are secrets (masked in GET and
 * SHOW CREATE), and whether it can be read and written. Kinds register in EXTERNAL_STREAM_KINDS.
 */
export interface ExternalStreamKind {
  readonly type: string;
  /** Check the settings (`type` included); throws EXTERNAL_STREAM_BAD_SETTING. */
  check(shape: ExternalStreamShape): void;
  /** Whether setting `name` holds a secret. */
  isSecret(name: string): boolean;
  /** Can SELECT read it? (`http` cannot: it is a write target.) */
  readonly readable: boolean;
  /** The columns of a CREATE that gives none (`raw string` for log). */
  readonly defaultColumns?: readonly ExternalColumn[];
  /** How rows written into it reach the outside (writable kinds). */
  delivery?(name: string, shape: ExternalStreamShape): { delivery: Delivery; backoff: RetryBackoff };
  /**
   * Readable kinds Tributary fetches from: the rows read are committed into a stream of the same
   * name (so table(), streaming reads and seek_to work as on any stream); this follows the source.
   */
  follow?(context: FollowContext): Follower;
  /** Readable kinds: a sample of events without creating the stream (operation 21). */
  preview?(
    shape: ExternalStreamShape,
    request: PreviewRequest,
    context: KindContext,
  ): Promise<PreviewEvent[]>;
}

/** What a kind may use of the server. */
export interface KindContext {
  /** The directory files are confined to (docs/operations.md, "User files directory"). */
  readonly userFilesDir: string;
  /** The external stream's name (errors name it). */
  readonly name: string;
}

/** What a follower of one external stream gets. */
export interface FollowContext extends KindContext {
  readonly db: string;
  readonly shape: ExternalStreamShape;
  /** Where it keeps its position across restarts (a file of its own), if the server persists. */
  readonly stateFile?: string;
  /** Commit rows (objects by column name, `_tp_time` allowed); a repeated id writes nothing. */
  commit(rows: Record<string, unknown>[], idempotencyId: string): Promise<void>;
  readonly logger?: import('../../log/logger.ts').Logger;
}

export interface Follower {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stop and forget the position (DROP). */
  destroy(): Promise<void>;
}

/** Operation 21's body: `count` events from `offset`, waiting at most `timeoutMs`. */
export interface PreviewRequest {
  readonly count: number;
  readonly offset: 'earliest' | 'latest';
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

export type PreviewEvent = Record<string, unknown>;

const kinds = new Map<string, ExternalStreamKind>();

/** Make a kind known (each kind's module registers itself; external-stream-kinds.ts imports them all). */
export function registerExternalStreamKind(kind: ExternalStreamKind): void {
  kinds.set(kind.type, kind);
}

/** The kind of `type`, or a 400 naming the setting `type` and the kinds there are. */
export function externalStreamKind(type: unknown): ExternalStreamKind {
  const kind = typeof type === 'string' ? kinds.get(type.toLowerCase()) : undefined;
  if (!kind) {
    const known = [...kinds.keys()].sort().join(', ');
    throw err('EXTERNAL_STREAM_BAD_SETTING', {
      setting: 'type',
      detail:
        type === undefined
          ? `required (supported: ${known})`
          : `${JSON.stringify(type)} is not supported here (supported: ${known}; Kafka, Pulsar and NATS external streams are not built)`,
    });
  }
  return kind;
}

export const badSetting = (setting: string, detail: string) =>
  err('EXTERNAL_STREAM_BAD_SETTING', { setting, detail });
