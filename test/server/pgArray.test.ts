import knexFactory from 'knex';
import { pgArray } from '../../server/src/ledger/postgres/conn';

/** The ledger's PostgreSQL statements take their rows as array literals built by pgArray. */

const TRICKY = ['', 'plain', 'a,b', '{braces}', 'quote " inside', 'back\\slash', '\\"', 'NULL', ' spaced ', '多字节 🚀', 'line\nbreak', '{"json":"x\\"y"}'];

test('writes numbers and booleans as they are, strings quoted and escaped, null as NULL', () => {
  expect(pgArray([])).toBe('{}');
  expect(pgArray([1, -2, 2 ** 52, 0])).toBe('{1,-2,4503599627370496,0}');
  expect(pgArray([true, false])).toBe('{t,f}');
  expect(pgArray(['a"b', 'c\\d', null, undefined])).toBe('{"a\\"b","c\\\\d",NULL,NULL}');
});

const pgUrl = process.env.TEST_DATABASE_URL;
if (pgUrl)
  describe('round trip through PostgreSQL [postgres]', () => {
    const knex = knexFactory({ client: 'pg', connection: pgUrl });
    afterAll(() => knex.destroy());

    test('text, bigint, int and boolean arrays come back as they were sent', async () => {
      const ints = [0, 1, -1, 2 ** 53 - 1, -(2 ** 40)];
      const row = (
        await knex.raw('select ?::text[] as t, ?::bigint[] as b, ?::int[] as i, ?::boolean[] as f, ?::text[] as n', [
          pgArray(TRICKY),
          pgArray(ints),
          pgArray([1, 2, 3]),
          pgArray([true, false, true]),
          pgArray(['x', null]),
        ])
      ).rows[0];
      expect(row.t).toEqual(TRICKY);
      expect(row.b.map(Number)).toEqual(ints);
      expect(row.i).toEqual([1, 2, 3]);
      expect(row.f).toEqual([true, false, true]);
      expect(row.n).toEqual(['x', null]);
    });
  });
