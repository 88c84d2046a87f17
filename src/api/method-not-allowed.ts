import type { FastifyInstance } from 'fastify';
import { routeAccessTable } from './access.ts';

interface RoutePattern {
  pattern: RegExp;
  methods: Set<string>;
}

/** `/a/:id/b` -> a RegExp matching `/a/<anything but a slash>/b`; `*` matches the rest. */
function patternOf(url: string): RegExp {
  const parts = url.split('/').map((part) => {
    if (part.startsWith(':')) return '[^/]+';
    if (part === '*') return '.*';
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${parts.join('/')}$`);
}

/**
 * The methods a path has, from the server's route table: for a request that no route answers,
 * a non-empty list means the path exists with other methods (405, `Allow`), an empty one that
 * it does not exist (404).
 */
export function allowedMethods(app: FastifyInstance): (path: string) => string[] {
  let patterns: RoutePattern[] | undefined;
  return (path) => {
    if (!patterns) {
      const byUrl = new Map<string, Set<string>>();
      for (const route of routeAccessTable(app)) {
        const methods = byUrl.get(route.url) ?? new Set<string>();
        methods.add(route.method);
        byUrl.set(route.url, methods);
      }
      patterns = [...byUrl].map(([url, methods]) => ({ pattern: patternOf(url), methods }));
    }
    const allowed = new Set<string>();
    for (const p of patterns) {
      if (p.pattern.test(path)) for (const m of p.methods) allowed.add(m);
    }
    return [...allowed].sort();
  };
}
