/* eslint-disable no-useless-assignment -- the tests drop their references (`x = []`) so that a collection can free them */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import { collectNow, exposeGc, startIdleGc } from '../../server/src/lib/idleGc';
import { testGc } from '../helpers/gc';
import { nativeMemory } from '../../server/src/lib/native';
import { waitFor } from '../helpers/clock';

/**
 * The idle GC's interval, idle time and collection passes run on jest's fake timers (and its
 * `Date.now()` on the fake clock): `advance(ms)` moves them. The requests are real (a local
 * server, fetch): each step first waits until the server has seen its responses close.
 */
const advance = (ms: number) => jest.advanceTimersByTimeAsync(ms);

describe('idle GC after a burst', () => {
  let server: http.Server;
  let url: string;
  /** Responses this test's server has not closed yet. */
  let inFlight = { n: 0 };
  const settled = (n = 0) => waitFor(() => inFlight.n === n);
  beforeEach(async () => {
    const mine = (inFlight = { n: 0 });
    server = http.createServer((req, res) => {
      mine.n++;
      res.on('close', () => mine.n--);
      // /slow: a long answer (a stream), written in parts over 900 ms (of the fake clock).
      if (req.url === '/slow') {
        res.write('a');
        setTimeout(() => res.write('b'), 400);
        setTimeout(() => res.end('c'), 900);
        return;
      }
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  /**
   * Runs `body` with the idle GC watching the test server, on fake timers; `burst(n)` makes n
   * quick requests and returns once the server has closed them.
   */
  async function watching(opts: Parameters<typeof startIdleGc>[1], body: (burst: (n: number) => Promise<void>) => Promise<void>) {
    // Sockets, fetch and the server run on node's own timers, which jest does not fake.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'queueMicrotask', 'performance', 'hrtime'] });
    // RSS growth is its own test below; the others look at when, not whether, memory grew.
    const stop = startIdleGc(server, { minGrowthBytes: 0, ...opts });
    try {
      await body(async (n) => {
        for (let i = 0; i < n; i++) await (await fetch(url)).text();
        await settled();
      });
    } finally {
      stop();
      jest.useRealTimers();
    }
  }

  /** Starts a request to /slow and returns (its body to come) once the server has it in flight. */
  async function slowRequest(): Promise<{ body: Promise<string> }> {
    const body = fetch(`${url}slow`).then((r) => r.text());
    await settled(1);
    return { body };
  }

  test('collects (two passes) once the burst is over and the server has been quiet for idleMs', async () => {
    let calls = 0;
    await watching({ idleMs: 200, minRequests: 5, gc: () => calls++ }, async (burst) => {
      await burst(6);
      expect(calls).toBe(0); // still busy
      await advance(800);
      expect(calls).toBe(2);
      await advance(500);
      expect(calls).toBe(2); // once per burst, not every tick
    });
  });

  test('only a process that grew by minGrowthBytes since the last collection (or the start) is collected', async () => {
    let calls = 0;
    let rss = 100;
    await watching({ idleMs: 200, minRequests: 5, minGrowthBytes: 30, rss: () => rss, gc: () => calls++, trim: () => undefined }, async (burst) => {
      await burst(6);
      rss = 120; // grew by 20 < 30: nothing to give back
      await advance(700);
      expect(calls).toBe(0);
      rss = 140; // grew by 40 since the start
      await advance(600);
      expect(calls).toBe(2);
      // The new baseline is the RSS after that collection (140): another burst that leaves it at
      // 160 is not collected, one that leaves it at 175 is.
      await burst(6);
      rss = 160;
      await advance(700);
      expect(calls).toBe(2);
      rss = 175;
      await advance(600);
      expect(calls).toBe(4);
    });
  });

  test('a trickle below minRequests never triggers it, and busy servers are left alone', async () => {
    let calls = 0;
    await watching({ idleMs: 300, minRequests: 50, gc: () => calls++ }, async (burst) => {
      await burst(10);
      await advance(900);
      expect(calls).toBe(0);
    });
  });

  test('a response still in flight (a long stream) is traffic: no collection until it has closed and idleMs passed', async () => {
    let calls = 0;
    await watching({ idleMs: 200, minRequests: 5, gc: () => calls++ }, async (burst) => {
      await burst(5);
      const slow = await slowRequest();
      await advance(700); // 700 ms since the last request started, longer than idleMs
      expect(calls).toBe(0);
      await advance(200); // its last part
      expect(await slow.body).toBe('abc');
      await settled();
      await advance(100); // a tick 100 ms after it closed: not idle for long enough yet
      expect(calls).toBe(0);
      await advance(600);
      expect(calls).toBe(2);
    });
  });

  test('onIdle runs first and the collection waits for it (what it let go of is then collected)', async () => {
    const order: string[] = [];
    const onIdle = () => {
      order.push('idle');
      return new Promise((r) => setTimeout(r, 800)).then(() => void order.push('released'));
    };
    await watching({ idleMs: 200, minRequests: 5, gc: () => order.push('gc'), onIdle }, async (burst) => {
      await burst(5);
      await advance(650);
      expect(order).toEqual(['idle']); // still releasing: no collection yet
      await advance(900);
      expect(order).toEqual(['idle', 'released', 'gc', 'gc']);
    });
  });

  test('the malloc trim runs once, after both passes of the collection', async () => {
    const order: string[] = [];
    await watching({ idleMs: 200, minRequests: 5, gc: () => order.push('gc'), trim: () => order.push('trim') }, async (burst) => {
      await burst(6);
      expect(order).toEqual([]); // still busy
      await advance(800);
      expect(order).toEqual(['gc', 'gc', 'trim']);
      await advance(500);
      expect(order).toEqual(['gc', 'gc', 'trim']); // once per burst
    });
  });

  test('no trim below minRequests, nor while a response is in flight', async () => {
    let trims = 0;
    await watching({ idleMs: 200, minRequests: 5, gc: () => undefined, trim: () => trims++ }, async (burst) => {
      await burst(4); // below minRequests
      await advance(700);
      expect(trims).toBe(0);
      await burst(1);
      const slow = await slowRequest();
      await advance(700); // longer than idleMs, but /slow is still streaming
      expect(trims).toBe(0);
      await advance(200);
      expect(await slow.body).toBe('abc');
      await settled();
      await advance(700);
      expect(trims).toBe(1);
    });
  });

  test('a trim that throws does not break the collector', async () => {
    let calls = 0;
    const trim = () => {
      throw new Error('boom');
    };
    await watching({ idleMs: 200, minRequests: 5, gc: () => calls++, trim }, async (burst) => {
      await burst(5);
      await advance(800);
      expect(calls).toBe(2);
      await burst(5);
      await advance(800);
      expect(calls).toBe(4); // the next burst is collected as usual
    });
  });

  test('the native addon is built and loads here (Linux/glibc) and trims after churned Buffers', () => {
    const trim = nativeMemory()?.trim;
    expect(typeof trim).toBe('function');
    // Allocate and drop many native-backed (non-pooled) buffers, then trim.
    let keep: Buffer[] = [];
    for (let round = 0; round < 4; round++) {
      keep = [];
      for (let i = 0; i < 2000; i++) keep.push(Buffer.alloc(16 * 1024 + i));
    }
    keep = [];
    testGc()();
    let released: unknown;
    expect(() => (released = trim!())).not.toThrow();
    expect(typeof released).toBe('boolean');
  });

  test('its lowMemoryNotification shrinks the young generation and gives free old-generation pages back, which gc() does not', () => {
    const lowMemory = nativeMemory()?.lowMemoryNotification;
    expect(typeof lowMemory).toBe('function');
    const space = (name: string) => v8.getHeapSpaceStatistics().find((s) => s.space_name === name)!.space_size;
    // Grow the young generation with short-lived objects, and the old one with objects that survive
    // two scavenges and are then dropped.
    let survivors: Array<{ i: number; s: string }> = [];
    for (let i = 0; i < 300_000; i++) survivors.push({ i, s: `x${i}` });
    for (let round = 0; round < 20; round++) {
      let garbage: number[][] = [];
      for (let i = 0; i < 20_000; i++) garbage.push([i, i + 1, i + 2]);
      garbage = [];
    }
    survivors = [];
    testGc()();
    const afterGc = { young: space('new_space'), old: space('old_space') };
    lowMemory!();
    expect(space('new_space')).toBeLessThan(afterGc.young);
    expect(space('old_space')).toBeLessThan(afterGc.old);
  });

  test('collectNow (after start-up): both passes, then the trim, at once; a throwing trim is swallowed', () => {
    const order: string[] = [];
    collectNow({ gc: () => order.push('gc'), trim: () => order.push('trim') });
    expect(order).toEqual(['gc', 'gc', 'trim']);
    expect(() =>
      collectNow({
        gc: () => order.push('gc'),
        trim: () => {
          throw new Error('boom');
        },
      }),
    ).not.toThrow();
    expect(order).toHaveLength(5);
  });

  test('collectNow with the defaults gives back the young generation a start-up grew', () => {
    const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size;
    for (let round = 0; round < 20; round++) {
      let garbage: number[][] = [];
      for (let i = 0; i < 20_000; i++) garbage.push([i, i + 1, i + 2]);
      garbage = [];
    }
    const before = young();
    collectNow();
    expect(young()).toBeLessThan(before);
  });

  test('without an injected collector it takes the global gc that --expose-gc installs, none without it', () => {
    // Assigned, not deleted: where a worker turned --expose-gc on, V8 defines `gc` non-configurable.
    const g = globalThis as { gc?: unknown };
    const had = Object.prototype.hasOwnProperty.call(g, 'gc');
    const saved = g.gc;
    try {
      const gc = () => undefined;
      g.gc = gc;
      expect(exposeGc()).toBe(gc);
      g.gc = undefined;
      expect(exposeGc()).toBeUndefined();
    } finally {
      if (had) g.gc = saved;
      else delete g.gc;
    }
  });
});
