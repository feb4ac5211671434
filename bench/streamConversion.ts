/**
 * What converting a stream costs on its own, in-process: the mock's stream frames (bench/mock.ts,
 * one chunk per event as it writes them) through the relay's converted-stream path as the
 * conversion test harness runs it (test/server/conversion/harness.ts: the channel's splitter,
 * block parsing with its checks, the channel's translator, the client's writer, the end). No
 * sockets, no database, no relay around it: µs per stream (the fastest round, the least disturbed by
 * the rest of the machine, and the median of rounds), per direction of an
 * OpenAI or Claude upstream to every other client protocol (CM and CR of the relay benchmark among
 * them). Single-threaded and short: run it pinned on an idle core and compare runs side by side.
 *
 *   npm run bench:conversion [-- --chunks 40 --streams 3000 --rounds 7]
 */
import { convertStream } from '../test/server/conversion/harness';
import { PROTOCOLS, type Protocol } from '../test/server/conversion/protocols';
import { buildFrames } from './mock';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

const CHUNKS = arg('--chunks', 40);
const STREAMS = arg('--streams', 3000);
const ROUNDS = arg('--rounds', 7);

const frames = buildFrames(CHUNKS);
const streamOf = (f: { head: Buffer[]; deltas: Buffer[]; tail: Buffer[] }) => [...f.head, ...f.deltas, ...f.tail];
const UPSTREAM_FRAMES = { openai: streamOf(frames.openai), claude: streamOf(frames.claude) } as const;

/** client ← upstream, the relay benchmark's label where it has one. */
const DIRECTIONS: Array<{ client: string; upstream: keyof typeof UPSTREAM_FRAMES; label: string }> = [
  { client: 'claude', upstream: 'openai', label: 'CM' },
  { client: 'responses', upstream: 'claude', label: 'CR' },
  { client: 'openai', upstream: 'claude', label: '' },
  { client: 'responses', upstream: 'openai', label: '' },
];

const log = (line: string) => process.stdout.write(`${line}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

log(`converted streams in-process: ${CHUNKS} text deltas each, ${STREAMS} streams × ${ROUNDS} rounds after as many of warm-up`);
for (const d of DIRECTIONS) {
  const client = (PROTOCOLS as Record<string, Protocol | undefined>)[d.client];
  const upstream = (PROTOCOLS as Record<string, Protocol | undefined>)[d.upstream];
  if (!client?.inbound || !upstream?.adaptor) throw new Error(`no ${d.client} client or ${d.upstream} upstream in the protocol table`);
  const chunks = UPSTREAM_FRAMES[d.upstream];
  const first = convertStream(upstream, client, chunks);
  if (first.error || !first.text) throw new Error(`${d.client} ← ${d.upstream}: the stream did not convert (${JSON.stringify(first.error)})`);
  for (let i = 0; i < STREAMS; i++) convertStream(upstream, client, chunks);
  const perStream: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < STREAMS; i++) convertStream(upstream, client, chunks);
    perStream.push(Number(process.hrtime.bigint() - t0) / STREAMS / 1000);
  }
  const us = Math.min(...perStream);
  const name = `${d.client} client ← ${d.upstream} channel${d.label ? ` (${d.label})` : ''}`;
  log(
    `  ${name.padEnd(40)} ${us.toFixed(1).padStart(7)} µs/stream (median ${median(perStream).toFixed(1)})  ${((us * 1000) / chunks.length).toFixed(0).padStart(5)} ns/event`,
  );
}
