import { createConnection, createServer, type Socket } from 'node:net';

// A TCP relay between a service and a real server, which a test can cut: every connection dropped and new ones
// refused, as when the server's process is killed or its node leaves the network, without stopping the server
// other test files share. TLS passes through untouched (the server's certificate names 127.0.0.1, not a port).
export type NetworkCut = {
  /** The relay's address, to give the service instead of the server's. */
  port: number;
  /** Cuts once this many more bytes have gone from the service to the server (mid-request, mid-document). */
  cutAfter(bytes: number): void;
  /** Cuts now. */
  cut(): void;
  /** Lets connections through again. */
  restore(): void;
  readonly isCut: boolean;
  close(): Promise<void>;
};

export async function networkCut(target: { host: string; port: number }): Promise<NetworkCut> {
  const open = new Set<Socket>();
  let down = false;
  let budget = Number.POSITIVE_INFINITY;
  const cut = () => {
    down = true;
    for (const s of open) s.destroy();
    open.clear();
  };
  const server = createServer((client) => {
    if (down) return void client.destroy();
    const upstream = createConnection(target);
    open.add(client).add(upstream);
    const forget = () => {
      open.delete(client);
      open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      budget -= chunk.length;
      if (budget < 0) return cut();
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('close', forget).on('error', forget);
    upstream.on('close', forget).on('error', forget);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('relay has no port');
  return {
    port: address.port,
    cutAfter(bytes) {
      budget = bytes;
    },
    cut,
    restore() {
      down = false;
      budget = Number.POSITIVE_INFINITY;
    },
    get isCut() {
      return down;
    },
    async close() {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
