/**
 * Every node keeps the options in memory and reloads them from the table on each change (its own
 * or another node's, broadcast through the KV). Reloads overlap; the memory must end on the newest
 * snapshot whatever order their reads answer in.
 */
import type { Knex } from 'knex';
import type { KV } from '../../server/src/cache/kv';
import { OptionService } from '../../server/src/services/options';

type Rows = Array<{ key: string; value: string }>;

/** A table whose reads answer when the test says, in any order. */
function slowTable() {
  const reads: Array<(rows: Rows) => void> = [];
  const knex = (() => ({ select: () => new Promise<Rows>((resolve) => reads.push(resolve)) })) as unknown as Knex;
  return { knex, reads };
}
const quietKv = { subscribe: () => undefined, publish: async () => undefined } as unknown as KV;

describe('options reload', () => {
  it('keeps the newest snapshot when an earlier reload answers last', async () => {
    const { knex, reads } = slowTable();
    const options = new OptionService(knex, quietKv);
    const changed: string[][] = [];
    options.onChange((keys) => changed.push(keys));
    // A broadcast reload reads first; the write's own reload reads after the write, and answers first.
    const broadcast = options.load();
    const own = options.load();
    reads[1]!([{ key: 'ServerAddress', value: '' }]);
    await own;
    reads[0]!([{ key: 'ServerAddress', value: 'https://old.example.com' }]);
    await broadcast;
    expect(options.get('ServerAddress')).toBe('');
    expect(changed.flat()).not.toContain('ServerAddress'); // '' is the default: nothing changed
  });

  it('applies reloads that answer in the order they started', async () => {
    const { knex, reads } = slowTable();
    const options = new OptionService(knex, quietKv);
    const first = options.load();
    const second = options.load();
    reads[0]!([{ key: 'SystemName', value: 'A' }]);
    await first;
    expect(options.get('SystemName')).toBe('A');
    reads[1]!([{ key: 'SystemName', value: 'B' }]);
    await second;
    expect(options.get('SystemName')).toBe('B');
  });
});
