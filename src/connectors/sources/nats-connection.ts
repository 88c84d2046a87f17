import {
  type ConnectionOptions,
  connect,
  credsAuthenticator,
  type NatsConnection,
} from '@nats-io/transport-node';
import type { NatsProperties } from './nats-properties.ts';

/** Connect to the servers of a nats / nats_jetstream source with its credentials. */
export function connectNats(p: NatsProperties, name: string): Promise<NatsConnection> {
  const options: ConnectionOptions = {
    servers: p.servers,
    name: `tributary source ${name}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1000,
    ...(p.username !== undefined ? { user: p.username, pass: p.password } : {}),
    ...(p.token !== undefined ? { token: p.token } : {}),
    ...(p.creds !== undefined
      ? { authenticator: credsAuthenticator(new TextEncoder().encode(p.creds)) }
      : {}),
  };
  return connect(options);
}
