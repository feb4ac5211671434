import net from 'node:net';

/**
 * A TCP proxy in front of the test PostgreSQL that can break the connections going through it
 * the way a network or a database restart does, at a chosen moment of the wire protocol:
 * - `cutOn(marker, 'before')`: the next message from the client that holds `marker` (a named
 *   statement's name is in every Bind of it, `COMMIT` in the simple query) is dropped and the
 *   connection closed: the server never ran it;
 * - `cutOn(marker, 'after')`: that message reaches the server, and the connection is closed as
 *   its answer comes back: the server ran it (and committed it) but the client never learns;
 * - `down()` / `up()`: closes every connection and refuses new ones, until `up()`.
 */
export interface PgProxy {
  url: string;
  cutOn(marker: string, when: 'before' | 'after'): Promise<void>;
  down(): void;
  up(): void;
  close(): Promise<void>;
}

export async function startPgProxy(target: string): Promise<PgProxy> {
  const to = new URL(target);
  const pairs = new Set<{ client: net.Socket; server: net.Socket }>();
  let cut: { marker: Buffer; when: 'before' | 'after'; done: () => void } | undefined;
  let isDown = false;
  const server = net.createServer((client) => {
    if (isDown) return void client.destroy();
    const upstream = net.connect(Number(to.port || 5432), to.hostname);
    const pair = { client, server: upstream };
    pairs.add(pair);
    let dropAnswer: (() => void) | undefined;
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      const c = cut;
      if (c && chunk.includes(c.marker)) {
        cut = undefined;
        if (c.when === 'before') {
          end();
          c.done();
          return;
        }
        dropAnswer = () => {
          end();
          c.done();
        };
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (dropAnswer) return dropAnswer();
      client.write(chunk);
    });
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    cutOn: (marker, when) => new Promise<void>((done) => (cut = { marker: Buffer.from(marker), when, done })),
    down() {
      isDown = true;
      for (const p of [...pairs]) {
        p.client.destroy();
        p.server.destroy();
      }
      pairs.clear();
    },
    up() {
      isDown = false;
    },
    close: async () => {
      for (const p of [...pairs]) {
        p.client.destroy();
        p.server.destroy();
      }
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
