// Preloaded into the svc CLI (NODE_OPTIONS=--import) by tests that must prove a command opened no socket: any
// net.Server#listen (every HTTP server's, and @hono/node-server's) writes SOCKET_MARK to stderr and throws.
import net from 'node:net';

export const SOCKET_MARK = 'refuse-listen: a socket was about to be bound';

net.Server.prototype.listen = function refusedListen(...args) {
  process.stderr.write(`${SOCKET_MARK} (${JSON.stringify(args[0] ?? null)})\n`);
  throw new Error(SOCKET_MARK);
};
