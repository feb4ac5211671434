/**
 * What this machine costs before any target does anything: measured at the start of every
 * `npm run bench` (idle machine, nothing else started yet) and kept in the results file, so a
 * run's TTFT and C2 rows can be read against them.
 *
 * - `roundTripMs`: one byte over loopback TCP from the load core to the targets' core and back,
 *   `hot` (back to back) and `afterIdle` (after 10 ms of silence, as between the frames of the
 *   streams the TTFT phase measures). On a VM an idle vCPU halts, and waking it costs far more
 *   than the round trip itself; every hop a target adds on a stream's path pays it.
 * - `pgCommitMs`: one single-row UPDATE in its own transaction from the targets' core, `durable`
 *   (`synchronous_commit = on`, PostgreSQL's default and the gateway's: the commit waits for the
 *   WAL flush) and `async` (`off`: visible at once, flushed by the WAL writer within ≈ 3 ×
 *   wal_writer_delay), back to back; and `durableAfterIdle`, each after 1 ms of silence, as a
 *   gateway's statements come at c=1. A call on C2 settles with one durable commit before its
 *   answer ends.
 *
 * Run as a child pinned to the targets' core: `node --import tsx bench/floors.ts echo|pg [url]`.
 * `echo` listens on an ephemeral port (printed as its first line) and echoes; `pg` prints JSON.
 */
import net from 'node:net';

const ROUNDS = { hot: 1000, afterIdle: 300, commits: 400 };
const IDLE_MS = 10;

const p50 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface MachineFloors {
  roundTripMs?: { hot: number; afterIdle: number };
  /** `durable` / `async`: back to back; `durableAfterIdle`: each after 1 ms of silence, as a gateway's statements at c=1 come. */
  pgCommitMs?: { durable: number; async: number; durableAfterIdle?: number };
}

/** The floors in one line (the harness's output, `npm run bench:summary`); empty when none was measured. */
export function describeFloors(m: MachineFloors): string {
  const ms = (v: number) => v.toFixed(3);
  const parts: string[] = [];
  if (m.roundTripMs) parts.push(`a round trip between the cores ${ms(m.roundTripMs.hot)} ms back to back, ${ms(m.roundTripMs.afterIdle)} ms after 10 ms idle`);
  if (m.pgCommitMs) {
    const idle = m.pgCommitMs.durableAfterIdle === undefined ? '' : ` (${ms(m.pgCommitMs.durableAfterIdle)} ms after 1 ms idle)`;
    parts.push(`a PostgreSQL one-row commit ${ms(m.pgCommitMs.durable)} ms durable${idle}, ${ms(m.pgCommitMs.async)} ms with synchronous_commit off`);
  }
  return parts.join('; ');
}

/** Round trips to an echo server at `port` (this process on the load core, the server on the targets'). */
export async function measureRoundTrips(port: number): Promise<MachineFloors['roundTripMs']> {
  const sock = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject));
  sock.setNoDelay(true);
  // A round trip that never comes back fails the measure (the harness then leaves it out) instead of hanging the run.
  const once = () =>
    new Promise<number>((resolve, reject) => {
      const t = nowMs();
      const timer = setTimeout(() => reject(new Error('no echo within 1 s')), 1000);
      sock.once('data', () => {
        clearTimeout(timer);
        resolve(nowMs() - t);
      });
      sock.write('x');
    });
  try {
    const hot: number[] = [];
    for (let i = 0; i < ROUNDS.hot; i++) hot.push(await once());
    const idle: number[] = [];
    for (let i = 0; i < ROUNDS.afterIdle; i++) {
      await sleep(IDLE_MS);
      idle.push(await once());
    }
    return { hot: p50(hot.slice(100)), afterIdle: p50(idle) };
  } finally {
    sock.destroy();
  }
}

async function pgCommits(url: string): Promise<MachineFloors['pgCommitMs']> {
  const { Client } = await import('pg');
  const c = new Client({ connectionString: url });
  await c.connect();
  // A table of its own in a schema of its own (temporary tables write no WAL: nothing to flush).
  const schema = `bench_floor_${process.pid}`;
  try {
    await c.query(`create schema ${schema}`);
    await c.query(`create table ${schema}.t (id int primary key, v bigint not null)`);
    await c.query(`insert into ${schema}.t values (1, 0)`);
    const q = { name: 'floor_update', text: `update ${schema}.t set v = v + 1 where id = 1` };
    const commits = async (pauseMs = 0) => {
      const xs: number[] = [];
      for (let i = 0; i < ROUNDS.commits; i++) {
        if (pauseMs) await sleep(pauseMs);
        const t = nowMs();
        await c.query(q);
        xs.push(nowMs() - t);
      }
      return p50(xs.slice(50));
    };
    const durable = await commits();
    const durableAfterIdle = await commits(1);
    await c.query('set synchronous_commit = off');
    const async_ = await commits();
    return { durable, async: async_, durableAfterIdle };
  } finally {
    await c.query(`drop schema if exists ${schema} cascade`).catch(() => undefined);
    await c.end().catch(() => undefined);
  }
}

if (require.main === module) {
  const [mode, url] = process.argv.slice(2);
  if (mode === 'echo') {
    const server = net.createServer((s) => {
      s.setNoDelay(true);
      s.on('data', (d) => s.write(d));
    });
    server.listen(0, '127.0.0.1', () => console.log(String((server.address() as net.AddressInfo).port))); // eslint-disable-line no-console -- read by the harness
  } else if (mode === 'pg' && url) {
    pgCommits(url).then(
      (r) => console.log(JSON.stringify(r)), // eslint-disable-line no-console -- read by the harness
      (err: Error) => {
        console.error(err.message); // eslint-disable-line no-console -- read by the harness
        process.exit(1);
      },
    );
  } else {
    console.error('usage: floors.ts echo | pg <url>'); // eslint-disable-line no-console -- a command-line tool's output
    process.exit(2);
  }
}
