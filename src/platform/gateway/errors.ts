// The one error the gateway port throws. The message names the model, the URL (never a key) and what failed, so a
// person reading a log line or a 502 detail can act on it.
export class GatewayError extends Error {
  constructor(
    message: string,
    readonly details: { model?: string; url: string; status?: number; attempts?: number },
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'GatewayError';
  }
}

// A URL safe for logs: credentials and query string dropped (a key may ride there).
export function safeUrl(raw: string): string {
  try {
    const u = new URL(raw);
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(invalid URL)';
  }
}
