import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

// JSON lines on stdout (an audit event is a log line with an `event` field). `pretty`: `svc dev` on a terminal,
// lines for a person to read instead, written synchronously on the same stdout.
export function createLogger(service: string, level: string = 'info', opts: { pretty?: boolean } = {}): Logger {
  const options = {
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  if (!opts.pretty) return pino(options);
  return pino(
    options,
    pretty({ sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', messageFormat: '{service} {msg}' }),
  );
}
