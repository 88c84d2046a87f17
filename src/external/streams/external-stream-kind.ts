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
  /** How rows written into it reach the outside (writable kinds). */
  delivery?(name: string, shape: ExternalStreamShape): { delivery: Delivery; backoff: RetryBackoff };
}

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
