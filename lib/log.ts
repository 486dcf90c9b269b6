// pino JSON logs. API keys and secrets never reach a log line: the redact list is the backstop,
// the first line of defence is not putting them into log objects at all.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, base: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: { service: 'afrates', ...base },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['apiKey', 'api_key', 'key', 'secret', 'token', 'req.headers["x-api-key"]', 'headers["x-api-key"]'],
      censor: '[redacted]',
    },
  });
}
