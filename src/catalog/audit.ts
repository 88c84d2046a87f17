/** Who did something: the contract's Owner/Actor shape. */
export interface Actor {
  id: string;
  name: string;
}

/** Audit fields carried by most resources. Timestamps are UTC `YYYY-MM-DD HH:MM:SS`. */
export interface Audit {
  created_at: string;
  created_by: Actor;
  last_updated_at: string;
  last_updated_by: Actor;
}

/** The actor for work Tributary does on its own (start-up, recovery). */
export const SYSTEM_ACTOR: Actor = { id: 'system', name: 'system' };

export function actorOf(username: string): Actor {
  return { id: username, name: username };
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, the contract's audit timestamp form. */
export function auditTimestamp(date: Date = new Date()): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

export function newAudit(actor: Actor, now: Date = new Date()): Audit {
  const at = auditTimestamp(now);
  return { created_at: at, created_by: actor, last_updated_at: at, last_updated_by: actor };
}

export function touchAudit(audit: Audit, actor: Actor, now: Date = new Date()): Audit {
  return { ...audit, last_updated_at: auditTimestamp(now), last_updated_by: actor };
}
