import { readVersionInfo } from '../api/version-info.ts';
import { ConfigError, loadConfig } from '../config/config.ts';
import { createLogger, type Logger } from '../log/logger.ts';
import { PRIVATE_UMASK } from './data-dir.ts';
import { LICENSE_USAGE, LicenseCommandError, licenseCommand } from './license-command.ts';
import { checkDataDir, checkPort } from './preflight.ts';
import { StartupError } from './startup-error.ts';
import { Tributary } from './tributary.ts';
import { SERVE_USAGE, USAGE } from './usage.ts';

/** Print why the server cannot start as one line (no stack trace) and exit 1. */
function cannotStart(e: unknown, logger?: Logger): never {
  const message =
    e instanceof StartupError ? e.message : `cannot start: ${(e as Error).message ?? String(e)}`;
  logger?.debug({ err: e }, 'start-up failed');
  process.stderr.write(`tributary: ${message.split('\n')[0]}\n`);
  process.exit(1);
}

async function serve(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(SERVE_USAGE);
    return;
  }
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
  // What an operator can fix is refused before anything is created (the first admin included).
  let tributary: Tributary;
  try {
    await checkDataDir(config.dataDir);
    await checkPort(config.host, config.port);
    tributary = await Tributary.open(config, logger);
  } catch (e) {
    cannotStart(e, logger);
  }
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
  let address: string;
  try {
    address = await tributary.listen();
  } catch (e) {
    await tributary.close().catch(() => {});
    cannotStart(e, logger);
  }
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
  case '--version':
  case '-v':
  case 'version':
    process.stdout.write(`tributary ${readVersionInfo().version}\n`);
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
