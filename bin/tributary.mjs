#!/usr/bin/env node
// Entry point. The engine runs its calls on libuv's thread pool, which file I/O shares; size it
// before anything starts the pool (chdb-notes.md, addendum on timeouts and the thread pool).
process.env.UV_THREADPOOL_SIZE ??= '16';
const { register } = await import('tsx/esm/api');
register();
await import('../src/cli/main.ts');
