import { aggregateRollups, type RollupDim } from '../../server/src/repositories/logRollups';
import { logRow, type LogRow, type NewLog } from '../../server/src/repositories/logs';
import { DIM } from '../../migrations/002_log_rollups';

/** Deterministic PRNG so a failure can be replayed. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

const DIMS: RollupDim[] = [
  { dim: 0, secs: 3600 },
  { dim: DIM.user_id, secs: 3600 },
  { dim: DIM.model_name | DIM.channel_id, secs: 86400 },
  { dim: DIM.username | DIM.token_name | DIM.group, secs: 3600 },
];

/** The sums by a plain key per row and dimension: what aggregateRollups must equal. */
function reference(logs: LogRow[], dims: RollupDim[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const l of logs) {
    for (const { dim, secs } of dims) {
      const key = [
        dim,
        dim & DIM.user_id ? l.user_id : 0,
        dim & DIM.username ? l.username : '',
        dim & DIM.token_name ? l.token_name : '',
        dim & DIM.model_name ? l.model_name : '',
        dim & DIM.channel_id ? l.channel_id : 0,
        dim & DIM.group ? l.group : '',
        Math.floor(l.created_at / secs) * secs,
        l.type,
      ];
      const k = JSON.stringify(key);
      const sum = out.get(k) ?? [0, 0, 0];
      sum[0]! += 1;
      sum[1]! += Number(l.quota);
      sum[2]! += Number(l.prompt_tokens) + Number(l.completion_tokens);
      out.set(k, sum);
    }
  }
  return out;
}

const asMap = (rows: unknown[][]) => new Map(rows.map((r) => [JSON.stringify(r.slice(0, 9)), r.slice(9) as number[]]));

describe('aggregateRollups', () => {
  test.each([1, 2, 3, 4, 5])('equals a per-row sum (seed %i): runs of alike rows, rows that come back after others', (seed) => {
    const r = rng(seed);
    const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)]!;
    const logs: LogRow[] = [];
    let prev: LogRow | undefined;
    for (let i = 0; i < 600; i++) {
      // Rows repeat the previous one's attributes (a batch of one key's calls), or repeat them
      // but for one field, or are drawn afresh from a few values (so an earlier sum is met again
      // after others): a sum must take exactly the rows alike in every field.
      const fresh = (): NewLog => ({
        user_id: pick([1, 2]),
        username: pick(['ann', 'ben']),
        token_name: pick(['', 'k1']),
        model_name: pick(['gpt-4o-mini', 'claude']),
        channel_id: pick([1, 2]),
        group: pick(['default', 'vip']),
        created_at: pick([1_700_000_000, 1_700_000_001, 1_700_003_600]),
        type: pick([2, 2, 5]),
      });
      const usage = { quota: Math.floor(r() * 100), prompt_tokens: Math.floor(r() * 50), completion_tokens: Math.floor(r() * 20) };
      const roll = r();
      let attrs: NewLog;
      if (!prev || roll < 0.3) attrs = fresh();
      else if (roll < 0.6) attrs = { ...prev };
      else {
        const field = pick(['user_id', 'username', 'token_name', 'model_name', 'channel_id', 'group', 'created_at', 'type'] as const);
        attrs = { ...prev, [field]: fresh()[field] };
      }
      const row = logRow({ ...attrs, ...usage });
      logs.push(row);
      prev = row;
    }
    const got = aggregateRollups(logs, DIMS);
    // One upsert per key: no key twice.
    expect(asMap(got).size).toBe(got.length);
    expect(asMap(got)).toEqual(reference(logs, DIMS));
  });

  test('a row alike a sum older than the recent ones joins that sum: one upsert per key', () => {
    // Six distinct rows, then the first again: past the rows compared field by field, so only the
    // key finds its sum; a second sum for it would write its key twice.
    const models = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm1'];
    const logs = models.map((model_name, i) => logRow({ user_id: 1, model_name, created_at: 1_700_000_000, type: 2, quota: i + 1 }));
    const got = aggregateRollups(logs, [{ dim: DIM.model_name, secs: 3600 }]);
    expect(got).toHaveLength(6);
    expect(asMap(got).get(JSON.stringify([DIM.model_name, 0, '', '', 'm1', 0, '', 1_699_999_200, 2]))).toEqual([2, 8, 0]);
  });
});
