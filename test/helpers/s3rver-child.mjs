// s3rver in its own process: the engine's S3 client may block the test process's event loop
// while it waits for the server (a streamed read), so the server cannot share that loop.
import S3rver from 's3rver';

const [directory, bucket] = process.argv.slice(2);
const server = new S3rver({
  port: 0,
  address: '127.0.0.1',
  silent: true,
  directory,
  configureBuckets: [{ name: bucket, configs: [] }],
});
const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ port })}\n`);
process.on('SIGTERM', () => {
  server.close().then(() => process.exit(0));
});
