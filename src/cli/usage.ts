import { DEFAULTS, VARIABLE_NAMES } from '../config/config.ts';

const DEFAULT_TEXT: Record<string, string> = {
  TRIBUTARY_PORT: String(DEFAULTS.port),
  TRIBUTARY_HOST: DEFAULTS.host,
  TRIBUTARY_DATA: './data',
  TRIBUTARY_ADMIN_PASSWORD: 'generated on first start, shown once',
  TRIBUTARY_LOG_LEVEL: DEFAULTS.logLevel,
  TRIBUTARY_ENGINE_USER_SESSIONS: String(DEFAULTS.engineUserSessions),
  TRIBUTARY_ENGINE_SYSTEM_SESSIONS: String(DEFAULTS.engineSystemSessions),
  TRIBUTARY_ENGINE_STREAM_SESSIONS: String(DEFAULTS.engineStreamSessions),
  TRIBUTARY_TAIL_STEP_GAP_MS: String(DEFAULTS.tailStepGapMs),
  TRIBUTARY_VIEW_STEP_GAP_MS: String(DEFAULTS.viewStepGapMs),
  TRIBUTARY_TAIL_LATE_SHARE: String(DEFAULTS.tailLateShare),
};

const OPTIONS = VARIABLE_NAMES.map(
  (v) => `  ${`${v.flag} <value>`.padEnd(34)} ${v.env.padEnd(34)} default: ${DEFAULT_TEXT[v.env] ?? '-'}`,
).join('\n');

export const USAGE = `Usage: tributary <command> [options]

Commands:
  serve      start the server (REST API on TRIBUTARY_PORT, data under TRIBUTARY_DATA)
  license    make license key pairs and license files (tributary license help)
  help       show this text
  --version  show the version

Run "tributary serve --help" for the options of serve.
`;

export const SERVE_USAGE = `Usage: tributary serve [options]

Start the server. Each option is also read from its environment variable; the flag wins.

${OPTIONS}
`;
