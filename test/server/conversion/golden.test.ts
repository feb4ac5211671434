/**
 * Golden conversion suite, pure (no HTTP, no database): every converted direction (client protocol
 * ≠ upstream protocol) runs the client request fixtures, the upstream answers, errors and streams
 * through the relay's conversion code and compares the result with a reviewed golden file.
 * Streams run cut at awkward byte boundaries and must give the same client output every time.
 * Beside the goldens, protocol invariants (fields each API defines, well-formed streams, facts a
 * conversion must carry) are checked against the reviewed list of known violations.
 *
 * Layout and regeneration: test/fixtures/conversion/README.md (`GOLDEN_UPDATE=1` rewrites goldens).
 */
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { SSEEvent } from '../../../server/src/relay/types';
import {
  awkwardChunkings,
  chunkFacts,
  convertAnswer,
  convertError,
  convertRequest,
  convertStream,
  everyTwoPieceSplit,
  normalise,
  parseSse,
  readBack,
  responseFacts,
  splitEvents,
  toCrlf,
  type ClientRequestFixture,
  type ErrorGolden,
  type StreamRun,
  type UpstreamGolden,
} from './harness';
import {
  clientRequestViolations,
  digestDifferences,
  endsInError,
  streamErrorMessage,
  errorViolations,
  factDifferences,
  requestDigest,
  reasoningViolations,
  requestViolations,
  streamViolations,
  type StreamEvent,
} from './invariants';
import { scrubSecrets } from '../../../server/src/relay/errors';
import { adaptorContext, CHANNEL_KEY, directions, PROTOCOL_NAMES, PROTOCOLS, routeOf, type Protocol } from './protocols';

const ROOT = path.resolve(__dirname, '../../fixtures/conversion');
const GOLDEN_DIR = path.join(ROOT, 'golden');
const KNOWN_FILE = path.join(ROOT, 'known-violations.json');
const UPDATE = process.env.GOLDEN_UPDATE === '1';
const REGENERATE = 'GOLDEN_UPDATE=1 npx jest --config test/jest.config.js test/server/conversion';

type Kind = 'requests' | 'answers' | 'errors' | 'streams';
const EXT: Record<Kind, string> = { requests: '.json', answers: '.json', errors: '.json', streams: '.sse' };
const SUFFIX: Record<Kind, string> = { requests: 'upstream', answers: 'answer', errors: 'error', streams: 'stream' };

function cases(kind: Kind, protocol: string): string[] {
  const dir = path.join(ROOT, kind, protocol);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(EXT[kind]))
    .map((f) => f.slice(0, -EXT[kind].length))
    .sort();
}
const fixturePath = (kind: Kind, protocol: string, name: string) => path.join(ROOT, kind, protocol, `${name}${EXT[kind]}`);
const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T;

/** Compares with the golden file, or (GOLDEN_UPDATE=1) writes it when it differs. */
function expectGolden(rel: string, actual: unknown): void {
  const file = path.join(GOLDEN_DIR, rel);
  const value = JSON.parse(JSON.stringify(normalise(actual))) as unknown;
  const exists = fs.existsSync(file);
  if (UPDATE) {
    // An equal golden is left as it is (keeps the file's formatting, e.g. after prettier).
    if (!exists || !isDeepStrictEqual(readJson(file), value)) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
    }
    return;
  }
  if (!exists) throw new Error(`missing golden ${rel}: run ${REGENERATE} and review the new file`);
  expect(value).toEqual(readJson(file));
}

const streamGolden = (run: StreamRun) => (run.error ? run.error : { events: parseSse(run.text) });

// ---------------------------------------------------------------------------------------------
// Invariants, checked against the reviewed list of known violations

interface Violation {
  /** `<client>__<upstream>/<case> <kind>` */
  where: string;
  violation: string;
}
interface KnownViolation extends Violation {
  /** The entry of KNOWN_BUGS.md this is (or `UNREVIEWED`). */
  bug: string;
}

const known: KnownViolation[] = fs.existsSync(KNOWN_FILE) ? readJson<KnownViolation[]>(KNOWN_FILE) : [];
/** GOLDEN_UPDATE: the violations found per direction, written back to the known list after the run. */
const found = new Map<string, Violation[]>();

function directionViolations(client: Protocol, upstream: Protocol, key: string): Violation[] {
  const out: Violation[] = [];
  const add = (where: string, list: string[]) => {
    for (const violation of list) out.push({ where: `${key}/${where}`, violation });
  };
  for (const name of cases('requests', client.name)) {
    const fx = readJson<ClientRequestFixture>(fixturePath('requests', client.name, name));
    const run = convertRequest(client, upstream, fx);
    const needsState = (fx.body as { previous_response_id?: unknown }).previous_response_id !== undefined;
    if ('refused' in run.golden) {
      if (!needsState) add(`${name} request`, [`refused as needing a ${client.name} upstream: ${run.golden.refused.reason}`]);
      continue;
    }
    if (needsState) add(`${name} request`, ['previous_response_id needs the upstream that stored the response; converted instead of refused']);
    if ('error' in run.golden) {
      const e = run.golden.error;
      add(`${name} request`, [`conversion refused a valid ${client.name} request: ${e.status} ${JSON.stringify(e.body)}`]);
      continue;
    }
    const up = run.golden;
    const v = requestViolations(upstream.name, up.body);
    v.push(...reasoningViolations(client.name, fx.body, upstream.name, up.body));
    if (up.body && typeof up.body === 'object' && 'model' in up.body && (up.body as { model: unknown }).model !== upstream.upstreamModel) {
      v.push(`body model ${(up.body as { model: unknown }).model} is not the mapped model ${upstream.upstreamModel}`);
    }
    if (upstream.inbound && run.chat) {
      // Read the upstream body back with the upstream protocol's own client format: what was lost?
      const modelFromPath = upstream.name === 'gemini' ? upstream.upstreamModel : undefined;
      try {
        const back = upstream.inbound.toChat(up.body, modelFromPath);
        v.push(...digestDifferences(requestDigest(run.chat), requestDigest(back), upstream.name, up.body).map((d) => `round trip: ${d}`));
      } catch (err) {
        v.push(`round trip: the upstream body does not read back as a ${upstream.name} request (${(err as Error).message})`);
      }
    }
    add(`${name} request`, v);
  }
  for (const name of cases('answers', upstream.name)) {
    const body = readJson<unknown>(fixturePath('answers', upstream.name, name));
    const run = convertAnswer(upstream, client, body);
    if (!client.adaptor) continue;
    const back = client.adaptor.chatResponse(run.client, adaptorContext(client, { stream: false, requestedModel: client.clientModel }));
    add(`${name} answer`, factDifferences(client.name, responseFacts(run.canonical), responseFacts(back)));
  }
  for (const name of cases('errors', upstream.name)) {
    const fx = readJson<{ status: number; body: unknown }>(fixturePath('errors', upstream.name, name));
    const got = convertError(upstream, client, fx).error;
    const raw = typeof fx.body === 'string' ? fx.body : JSON.stringify(fx.body);
    add(`${name} error`, errorViolations(client.name, got.status, got.body, fx.status, scrubSecrets(upstreamMessageOf(fx.body, raw), [CHANNEL_KEY])));
  }
  for (const name of cases('streams', upstream.name)) {
    const bytes = fs.readFileSync(fixturePath('streams', upstream.name, name));
    const run = convertStream(upstream, client, [bytes]);
    if (run.error) {
      add(`${name} stream`, [`the stream failed before any output: ${JSON.stringify(run.error.error)}`]);
      continue;
    }
    const events = parseSse(run.text) as StreamEvent[];
    const v = streamViolations(client.name, events);
    const upstreamEvents = parseSse(bytes.toString('utf8')) as StreamEvent[];
    if (endsInError(upstreamEvents)) {
      // an upstream failure mid-stream must reach the client as an error, with what it said
      const said = streamErrorMessage(upstreamEvents) ?? '';
      if (!endsInError(events)) v.push(`the upstream's error (${JSON.stringify(said)}) is swallowed: the client sees a normal end`);
      else if (!(streamErrorMessage(events) ?? '').includes(said))
        v.push(`the upstream's error message ${JSON.stringify(said)} became ${JSON.stringify(streamErrorMessage(events))}`);
    } else if (client.adaptor) {
      const back = readBack(
        client,
        events.map((e) => ({ ...(e.event ? { event: e.event } : {}), data: typeof e.data === 'string' ? e.data : JSON.stringify(e.data) })) as SSEEvent[],
      );
      if (back.error) v.push(`the client's stream does not read back: ${back.error}`);
      else v.push(...factDifferences(client.name, chunkFacts(run.chunks, run.usage), chunkFacts(back.chunks, back.usage)));
    }
    add(`${name} stream`, v);
  }
  return out;
}

/** The message an upstream error body carries (what the client should still read). */
function upstreamMessageOf(body: unknown, raw: string): string {
  const b = body as { error?: { message?: unknown } | string; message?: unknown };
  if (b && typeof b === 'object') {
    if (typeof b.error === 'object' && typeof b.error?.message === 'string') return b.error.message;
    if (typeof b.error === 'string') return b.error;
    if (typeof b.message === 'string') return b.message;
  }
  return raw.trim().slice(0, 40);
}

const id = (v: Violation) => `${v.where} :: ${v.violation}`;

afterAll(() => {
  if (!UPDATE || !found.size) return;
  // Entries of directions not run this time stay; run ones are replaced, keeping reviewed bug ids.
  const prior = new Map(known.map((k) => [id(k), k.bug]));
  const ranKeys = [...found.keys()];
  const kept = known.filter((k) => !ranKeys.some((key) => k.where.startsWith(`${key}/`)));
  const fresh = [...found.values()].flat().map((v) => ({ ...v, bug: prior.get(id(v)) ?? 'UNREVIEWED' }));
  const all = [...kept, ...fresh].sort((a, b) => id(a).localeCompare(id(b)));
  fs.writeFileSync(KNOWN_FILE, `${JSON.stringify(all, null, 2)}\n`);
});

// ---------------------------------------------------------------------------------------------

describe('the protocol table', () => {
  it('has OpenAI Chat, Claude Messages and Gemini on both sides, with their channel kinds', () => {
    for (const [name, type] of [
      ['openai', 1],
      ['claude', 14],
      ['gemini', 24],
    ] as const) {
      const p = PROTOCOLS[name];
      expect(p?.inbound?.name).toBe(name);
      expect(p?.adaptor?.format).toBe(name);
      expect(p?.channelType).toBe(type);
    }
    expect(directions().length).toBeGreaterThanOrEqual(6);
  });

  it('has fixtures of every kind for every protocol, Responses included', () => {
    for (const p of PROTOCOL_NAMES) {
      for (const kind of ['requests', 'answers', 'errors', 'streams'] as const) expect({ p, kind, n: cases(kind, p).length > 0 }).toEqual({ p, kind, n: true });
    }
  });
});

describe('fixtures are well-formed for their protocol', () => {
  for (const p of PROTOCOL_NAMES) {
    it(`${p}: client requests use only fields of the protocol`, () => {
      for (const name of cases('requests', p)) {
        const fx = readJson<ClientRequestFixture>(fixturePath('requests', p, name));
        expect({ name, v: clientRequestViolations(p, fx.body) }).toEqual({ name, v: [] });
      }
    });
    it(`${p}: upstream streams are valid event sequences`, () => {
      for (const name of cases('streams', p)) {
        const events = parseSse(fs.readFileSync(fixturePath('streams', p, name), 'utf8')) as StreamEvent[];
        expect({ name, v: streamViolations(p, events) }).toEqual({ name, v: [] });
      }
    });
  }
});

describe('the relay reads every upstream stream the same however it is cut', () => {
  for (const p of PROTOCOL_NAMES.map((n) => PROTOCOLS[n]).filter((x): x is Protocol => !!x?.adaptor)) {
    for (const name of cases('streams', p.name)) {
      it(`${p.name}/${name}: every two-piece split, and with CRLF line ends`, () => {
        const bytes = fs.readFileSync(fixturePath('streams', p.name, name));
        const whole = splitEvents(p, [bytes]);
        expect(whole.length).toBeGreaterThan(1);
        for (const { at, chunks } of everyTwoPieceSplit(bytes)) {
          const got = splitEvents(p, chunks);
          if (!isDeepStrictEqual(got, whole)) throw new Error(`split at byte ${at} of ${name}.sse gives different events`);
        }
        const crlf = Buffer.from(toCrlf(bytes.toString('utf8')));
        expect(splitEvents(p, [crlf])).toEqual(whole);
        for (const { at, chunks } of everyTwoPieceSplit(crlf)) {
          if (!isDeepStrictEqual(splitEvents(p, chunks), whole)) throw new Error(`CRLF split at byte ${at} of ${name}.sse gives different events`);
        }
      });
    }
  }
});

for (const { client, upstream, key } of directions()) {
  describe(`${client.name} client → ${upstream.name} upstream`, () => {
    for (const name of cases('requests', client.name)) {
      it(`request ${name}`, () => {
        const fx = readJson<ClientRequestFixture>(fixturePath('requests', client.name, name));
        const run = convertRequest(client, upstream, fx);
        expectGolden(`${key}/${name}.upstream.json`, run.golden);
        if ('url' in run.golden) {
          const up = run.golden as UpstreamGolden;
          // the stream flag the client chose (path or body) reaches the upstream request
          const route = routeOf(client, fx.path);
          const stream = route.stream ?? (fx.body as { stream?: unknown }).stream === true;
          expect(run.stream).toBe(stream);
          expect(up.method).toBe('POST');
        } else if ('error' in run.golden) expect((run.golden as ErrorGolden).error.status).toBeGreaterThanOrEqual(400);
        else expect(run.golden.refused.reason).toBeTruthy();
      });
    }

    for (const name of cases('answers', upstream.name)) {
      it(`answer ${name}`, () => {
        const run = convertAnswer(upstream, client, readJson(fixturePath('answers', upstream.name, name)));
        expectGolden(`${key}/${name}.answer.json`, run.client);
      });
    }

    for (const name of cases('errors', upstream.name)) {
      it(`error ${name}`, () => {
        const got = convertError(upstream, client, readJson(fixturePath('errors', upstream.name, name)));
        expect(JSON.stringify(got)).not.toContain(CHANNEL_KEY);
        expectGolden(`${key}/${name}.error.json`, got);
      });
    }

    for (const name of cases('streams', upstream.name)) {
      it(`stream ${name} (same output however the upstream bytes are cut)`, () => {
        const bytes = fs.readFileSync(fixturePath('streams', upstream.name, name));
        const whole = convertStream(upstream, client, [bytes]);
        const want = JSON.stringify(normalise(streamGolden(whole)));
        const text = bytes.toString('utf8');
        const variants = [{ label: '', bytes }];
        if (!text.includes('\r')) variants.push({ label: 'CRLF, ', bytes: Buffer.from(toCrlf(text)) });
        // an upstream that closes without the last blank line (the splitter's tail)
        variants.push({ label: 'no final blank line, ', bytes: Buffer.from(text.replace(/(\r?\n)+$/, '')) });
        for (const variant of variants) {
          for (const ch of awkwardChunkings(variant.bytes)) {
            const got = JSON.stringify(normalise(streamGolden(convertStream(upstream, client, ch.chunks))));
            if (got !== want) throw new Error(`${variant.label}${ch.name}: the client output differs from the whole-stream output`);
          }
        }
        expectGolden(`${key}/${name}.stream.json`, streamGolden(whole));
      });
    }

    it('protocol invariants: exactly the known violations', () => {
      const got = directionViolations(client, upstream, key);
      if (UPDATE) found.set(key, got);
      const mine = known.filter((k) => k.where.startsWith(`${key}/`));
      const unreviewed = mine.filter((k) => k.bug === 'UNREVIEWED').map(id);
      const knownIds = new Set(mine.map(id));
      const gotIds = new Set(got.map(id));
      expect({
        new: [...gotIds].filter((x) => !knownIds.has(x)),
        fixed: UPDATE ? [] : [...knownIds].filter((x) => !gotIds.has(x)),
        unreviewed: UPDATE ? [] : unreviewed,
      }).toEqual({ new: UPDATE ? [...gotIds].filter((x) => !knownIds.has(x)) : [], fixed: [], unreviewed: [] });
    });
  });
}

describe('golden files', () => {
  it('every golden file belongs to a fixture and a direction of the table', () => {
    const expected = new Set<string>();
    const dirs = new Set<string>();
    for (const { client, upstream, key } of directions()) {
      dirs.add(key);
      for (const kind of ['requests', 'answers', 'errors', 'streams'] as const) {
        const owner = kind === 'requests' ? client.name : upstream.name;
        for (const name of cases(kind, owner)) expected.add(`${key}/${name}.${SUFFIX[kind]}.json`);
      }
    }
    const extra: string[] = [];
    for (const dir of fs.existsSync(GOLDEN_DIR) ? fs.readdirSync(GOLDEN_DIR) : []) {
      if (!dirs.has(dir)) continue; // a direction whose protocol this build does not have yet
      for (const f of fs.readdirSync(path.join(GOLDEN_DIR, dir))) {
        const rel = `${dir}/${f}`;
        if (expected.has(rel)) continue;
        if (UPDATE) fs.rmSync(path.join(GOLDEN_DIR, rel));
        else extra.push(rel);
      }
    }
    expect(extra).toEqual([]);
  });
});
