import { JetStreamRuntime } from './jetstream-runtime.ts';
import { jetStreamProperties, natsProperties } from './nats-properties.ts';
import { NatsRuntime } from './nats-runtime.ts';
import { streamGeneratorProperties } from './source-properties.ts';
import type { SourceRuntime, SourceWriter } from './source-runtime.ts';
import type { SourceDefinition } from './source-service.ts';
import { StreamGeneratorRuntime } from './stream-generator-runtime.ts';
import { webSocketProperties } from './websocket-properties.ts';
import { WebSocketRuntime } from './websocket-runtime.ts';

/** The runtime of a source's type. */
export function sourceRuntime(def: SourceDefinition, writer: SourceWriter): SourceRuntime {
  switch (def.type) {
    case 'stream_generator':
      return new StreamGeneratorRuntime(streamGeneratorProperties(def.properties), writer);
    case 'websocket':
      return new WebSocketRuntime(webSocketProperties(def.properties), writer);
    case 'nats':
      return new NatsRuntime(def.name, natsProperties(def.properties), writer);
    case 'nats_jetstream':
      return new JetStreamRuntime(def.name, jetStreamProperties(def.properties, def.name), writer);
    default:
      throw new Error(`no runtime for source type ${def.type}`);
  }
}
