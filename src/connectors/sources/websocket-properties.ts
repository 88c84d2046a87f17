import { err } from '../../errors/tributary-error.ts';

export interface WebSocketProperties {
  readonly url: string;
  /** Sent once after each connection opens (a subscription request, say). */
  readonly openMessage?: string;
  /** How a message becomes a row: `json` (its fields are columns) or `text` (column `raw`). */
  readonly dataType: 'json' | 'text';
}

const KNOWN = ['url', 'open_message', 'open_message_type', 'data_type'];
const bad = (property: string, detail: string) => err('SOURCE_BAD_PROPERTY', { property, detail });

/**
 * Properties of a `websocket` source (Timeplus's names): `url` (ws:// or wss://, required),
 * `open_message` (optional; a string, or with `open_message_type` json an object sent as JSON),
 * `data_type` (`json` or `text`, default json).
 */
export function webSocketProperties(p: Record<string, unknown>): WebSocketProperties {
  for (const k of Object.keys(p))
    if (!KNOWN.includes(k))
      throw bad(`properties.${k}`, `unknown property of a websocket source (known: ${KNOWN.join(', ')})`);
  if (typeof p.url !== 'string') throw bad('properties.url', 'required: a ws:// or wss:// URL');
  let u: URL;
  try {
    u = new URL(p.url);
  } catch {
    throw bad('properties.url', `not a URL: ${p.url}`);
  }
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:')
    throw bad('properties.url', `expected ws:// or wss://, got ${p.url}`);
  const openType = p.open_message_type ?? 'text';
  if (openType !== 'text' && openType !== 'json')
    throw bad('properties.open_message_type', "expected 'text' or 'json'");
  let openMessage: string | undefined;
  if (p.open_message !== undefined && p.open_message !== null && p.open_message !== '') {
    if (typeof p.open_message === 'string') openMessage = p.open_message;
    else if (openType === 'json' && typeof p.open_message === 'object')
      openMessage = JSON.stringify(p.open_message);
    else throw bad('properties.open_message', 'expected a string (or an object with open_message_type json)');
  }
  const dataType = p.data_type ?? 'json';
  if (dataType !== 'json' && dataType !== 'text')
    throw bad('properties.data_type', "expected 'json' or 'text'");
  return { url: p.url, dataType, ...(openMessage !== undefined ? { openMessage } : {}) };
}
