import { ConfigError, loadConfig, VARIABLE_NAMES } from '../config/config.ts';
import { createLogger } from '../log/logger.ts';
import { PRIVATE_UMASK } from './data-dir.ts';
import { LICENSE_USAGE, LicenseCommandError, licenseCommand } from './license-command.ts';
import { Tributary } from './tributary.ts';

const USAGE = `Usage: tributary <command> [options]

Commands:
  serve    start the server (REST API on TRIBUTARY_PORT, data under TRIBUTARY_DATA)
  license  make license key pairs and license files (tributary license help)
  help     show this text

Options of serve (each also read from the environment variable of the same name):
${VARIABLE_NAMES.map((v) => `  ${v.flag.padEnd(26)} ${v.env}`).join('\n')}
`;

async function serve(argv: string[]): Promise<void> {
  // Before anything is created: the data directory and all in it (the engine's files too) private.
  process.umask(PRIVATE_UMASK);
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env, argv);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`tributary: configuration error in ${e.variable}: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  const logger = createLogger(config.logLevel);
  const tributary = await Tributary.open(config, logger);
  if (tributary.initialAdmin) {
    const a = tributary.initialAdmin;
    if (a.generated) {
      process.stdout.write(
        `\nCreated user "${a.username}" with generated password: ${a.password}\n` +
          `It will not be shown again. It is also in ${a.file} (mode 0600): store it elsewhere, then delete that file.\n\n`,
      );
    } else {
      process.stdout.write(
        `\nCreated user "${a.username}" with the password from TRIBUTARY_ADMIN_PASSWORD\n\n`,
      );
    }
  }
  const address = await tributary.listen();
  logger.info({ address, data: config.dataDir }, `Tributary listening on ${address}`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    try {
      await tributary.close();
      logger.info('stopped');
      process.exitCode = 0;
    } catch (e) {
      logger.error({ err: e }, 'error during shutdown');
      process.exitCode = 1;
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

const [command, ...rest] = process.argv.slice(2);
switch (command) {
  case 'serve':
    await serve(rest);
    break;
  case 'license':
    if (rest.length === 0 || rest[0] === 'help' || rest[0] === '--help') {
      process.stdout.write(LICENSE_USAGE);
      break;
    }
    try {
      await licenseCommand(rest, (text) => process.stdout.write(text));
    } catch (e) {
      if (!(e instanceof LicenseCommandError)) throw e;
      process.stderr.write(`tributary license: ${e.message}\n\n${LICENSE_USAGE}`);
      process.exit(2);
    }
    break;
  case undefined:
  case 'help':
  case '--help':
  case '-h':
    process.stdout.write(USAGE);
    break;
  default:
    process.stderr.write(`tributary: unknown command "${command}"\n\n${USAGE}`);
    process.exit(2);
}
