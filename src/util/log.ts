// One logger for every process. pino writes JSON lines; secrets are redacted by path so that a
// careless `log.info({ req })` cannot leak them.
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'apiKey',
  'api_key',
  'sessionKey',
  'session_api_key',
  'secrets',
  '*.apiKey',
  '*.api_key',
  '*.sessionKey',
  '*.session_api_key',
  '*.secrets',
  'headers.authorization',
  'headers["x-session-api-key"]',
  'req.headers.authorization',
  'req.headers["x-session-api-key"]',
];

export function createLogger(name: string, level = process.env.AGENTYARD_LOG_LEVEL ?? (process.env.VITEST ? 'silent' : 'info')): Logger {
  return pino({ name, level, redact: { paths: REDACT_PATHS, censor: '**********' } });
}
