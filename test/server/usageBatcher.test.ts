import { describeEach, DB_TARGETS, makeUser } from '../helpers/app';
import { usageBatcher } from '../../server/src/ledger/usage';
import { logRow, type LogRow } from '../../server/src/repositories/logs';

/** What the usage batcher writes comes back exactly (on PostgreSQL the rows travel as one array per column). */
describeEach(DB_TARGETS, 'usage batcher', (getApp) => {
  test('log rows keep every value, in order, whatever their text holds; counters add up', async () => {
    const app = getApp();
    const u = await makeUser(app);
    const [tok] = await app
      .knex('tokens')
      .insert({ user_id: u.id, key: `k${Date.now()}`, name: 'tk', remain_quota: 0, unlimited_quota: true })
      .returning('id');
    const tokenId = Number(typeof tok === 'object' ? (tok as { id: number }).id : tok);
    const texts = ['', 'NULL', 'null', 'a,b', '{x}', '"quoted"', 'back\\slash', "it's", 'line\nbreak', '中文 ✓ 🚀', ' spaced ', 'tab\tend'];
    const rows: Array<Partial<LogRow>> = texts.map((t, i) => ({
      user_id: u.id,
      type: 2,
      created_at: 1_700_000_000 + i,
      content: t,
      username: u.username,
      token_name: t.slice(0, 60),
      token_id: tokenId,
      model_name: `m-${t}`,
      quota: 2 ** 40 + i,
      prompt_tokens: i,
      completion_tokens: 2 * i,
      use_time: i % 3,
      is_stream: i % 2 === 0,
      channel_id: 7,
      channel_name: t,
      group: i % 2 ? 'vip' : 'default',
      ip: '10.0.0.1',
      other: JSON.stringify({ text: t, n: i }),
    }));
    const b = usageBatcher(app.ctx);
    for (const r of rows) b.addLog(r as LogRow);
    b.addUsage(u.id, tokenId, undefined, 300);
    b.addUsage(u.id, tokenId, undefined, 200);
    await b.flush();
    const back = await app.knex('logs').where({ user_id: u.id }).orderBy('id').select();
    expect(back.map((r) => ({ ...r, id: undefined, quota: Number(r.quota), created_at: Number(r.created_at), is_stream: Boolean(r.is_stream) }))).toEqual(
      rows.map((r) => ({ ...r, id: undefined })),
    );
    const user = await app.knex('users').where({ id: u.id }).first('used_quota', 'request_count');
    expect([Number(user.used_quota), Number(user.request_count)]).toEqual([500, 2]);
    const token = await app.knex('tokens').where({ id: tokenId }).first('used_quota', 'request_count', 'accessed_time');
    expect([Number(token.used_quota), Number(token.request_count)]).toEqual([500, 2]);
    expect(Number(token.accessed_time)).toBeGreaterThan(1_700_000_000);
  });

  test('a batch larger than one insert statement keeps every row, in the order they were added', async () => {
    const app = getApp();
    const u = await makeUser(app);
    // 123 rows: on SQLite two inserts of 50 rows, two of 10 and three of 1; created_at not in id order.
    const n = 123;
    const b = usageBatcher(app.ctx);
    for (let i = 0; i < n; i++) {
      b.addLog({
        user_id: u.id,
        type: 2,
        created_at: 1_700_000_000 + ((i * 37) % n),
        content: `row ${i}`,
        username: u.username,
        token_name: '',
        token_id: 0,
        model_name: `bm${i % 7}`,
        quota: i,
        prompt_tokens: i,
        completion_tokens: 0,
        use_time: 0,
        is_stream: false,
        channel_id: 1,
        channel_name: '',
        group: 'default',
        ip: '',
        other: '',
      } as LogRow);
    }
    await b.flush();
    const back = await app.knex('logs').where({ user_id: u.id }).orderBy('id').select('content', 'created_at', 'quota', 'model_name');
    expect(back.map((r) => [r.content, Number(r.created_at), Number(r.quota), r.model_name])).toEqual(
      Array.from({ length: n }, (_, i) => [`row ${i}`, 1_700_000_000 + ((i * 37) % n), i, `bm${i % 7}`]),
    );
    // The rollups saw every row too (per model: the rows' count and quota).
    const m3 = await app.knex('log_rollups').where({ dim: 8, model_name: 'bm3', type: 2 }).sum({ n: 'n', q: 'quota' }).first();
    const want = Array.from({ length: n }, (_, i) => i).filter((i) => i % 7 === 3);
    expect([Number(m3?.n), Number(m3?.q)]).toEqual([want.length, want.reduce((a, x) => a + x, 0)]);
  });

  test("a queued row's `other` ends with its tail, written when the row is", async () => {
    const app = getApp();
    const u = await makeUser(app);
    const b = usageBatcher(app.ctx);
    let written = 0;
    const tail = (t: string) => ({
      json: () => {
        written++;
        return `${t}}`;
      },
    });
    const row = (at: number, other: string) =>
      logRow({ user_id: u.id, type: 2, username: u.username, model_name: 'tm', quota: 1, channel_id: 1, created_at: at, other });
    b.addRow({ ...row(1_700_000_000, '{"a":1,'), otherTail: tail('"b":"中文 \\"x\\""') });
    b.addRow(row(1_700_000_001, '{"plain":true}'));
    // Not written while queued.
    expect(written).toBe(0);
    await b.flush();
    const back = await app.knex('logs').where({ user_id: u.id }).orderBy('id').select('other');
    expect(back.map((r) => JSON.parse(r.other as string))).toEqual([{ a: 1, b: '中文 "x"' }, { plain: true }]);
    expect(written).toBe(1);
  });
});
