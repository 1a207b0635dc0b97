import { pino, type Logger } from 'pino';

export type { Logger };

// JSON lines on stdout. An audit event is a log line with an `event` field.
export function createLogger(service: string, level: string = 'info'): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}
