import { DB_TARGETS, describeEach, makeUser } from '../helpers/app';
import { accessHeaders } from '../helpers/auth';
import { epaySign } from '../../server/src/services/epay';

const EPAY_KEY = 'epay-test-key';

describeEach(DB_TARGETS, 'online top-up (epay)', (app) => {
  let user: { id: number; username: string };
  let headers: Record<string, string>;

  beforeAll(async () => {
    user = await makeUser(app(), { quota: 0 });
    headers = await accessHeaders(app(), user.id);
  });

  it('refuses to pay while online top-up is not configured', async () => {
    const res = await app().http().post('/api/user/pay').set(headers).send({ amount: 10, payment_method: 'zfb' });
    expect(res.body).toMatchObject({ success: false, message: '管理员未开启在线充值！' });
  });

  it('prices an amount with Price and the group top-up ratio, and enforces the minimum', async () => {
    await app().ctx.options.set('Price', '7.3');
    await app().ctx.options.set('MinTopUp', '2');
    await app().ctx.options.set('TopupGroupRatio', JSON.stringify({ default: 0.5 }));
    const ok = await app().http().post('/api/user/amount').set(headers).send({ amount: 10 });
    expect(ok.body).toMatchObject({ success: true, data: '36.50' });
    const low = await app().http().post('/api/user/amount').set(headers).send({ amount: 1 });
    expect(low.body).toMatchObject({ success: false, message: '充值数量不能小于 2' });
    const bad = await app().http().post('/api/user/amount').set(headers).send({ amount: 'lots' });
    expect(bad.body.success).toBe(false);
  });

  it('creates a signed payment form, and the verified notification credits exactly once', async () => {
    await app().ctx.options.set('PayAddress', 'https://pay.example.com');
    await app().ctx.options.set('EpayId', '1001');
    await app().ctx.options.set('EpayKey', EPAY_KEY);
    await app().ctx.options.set('ServerAddress', 'https://gw.example.com/');
    const res = await app().http().post('/api/user/pay').set(headers).send({ amount: 10, payment_method: 'wx' });
    expect(res.body.success).toBe(true);
    expect(res.body.url).toBe('https://pay.example.com/submit.php');
    const form = res.body.data as Record<string, string>;
    expect(form).toMatchObject({ pid: '1001', type: 'wxpay', money: '36.50', notify_url: 'https://gw.example.com/api/user/epay/notify', sign_type: 'MD5' });
    expect(form.sign).toBe(epaySign(form, EPAY_KEY));

    const notice: Record<string, string> = {
      pid: '1001',
      trade_no: 'P123',
      out_trade_no: form.out_trade_no!,
      type: 'wxpay',
      name: form.name!,
      money: '36.50',
      trade_status: 'TRADE_SUCCESS',
    };
    // A forged notification (bad signature) is refused and credits nothing.
    const forged = await app()
      .http()
      .get('/api/user/epay/notify')
      .query({ ...notice, sign: 'deadbeef'.repeat(4), sign_type: 'MD5' });
    expect(forged.text).toBe('fail');
    expect((await app().knex('users').where({ id: user.id }).first()).quota).toBe(0);

    const signed = { ...notice, sign: epaySign(notice, EPAY_KEY), sign_type: 'MD5' };
    const results = await Promise.all([1, 2, 3].map(() => app().http().get('/api/user/epay/notify').query(signed)));
    for (const r of results) expect(r.text).toBe('success');
    const after = await app().knex('users').where({ id: user.id }).first();
    expect(after.quota).toBe(10 * 500000);
    const topup = await app().knex('top_ups').where({ trade_no: form.out_trade_no }).first();
    expect(topup.status).toBe('success');
    const logs = await app().knex('logs').where({ user_id: user.id, type: 1 });
    expect(logs).toHaveLength(1);
    expect(Number(logs[0].quota)).toBe(10 * 500000);
    // The row carries the username: the usage log's username filter finds it.
    expect(logs[0].username).toBe(user.username);
    const admin = await makeUser(app(), { role: 10 });
    const adminH = await accessHeaders(app(), admin.id);
    const byName = await app().http().get('/api/log').set(adminH).query({ type: 1, username: user.username });
    expect(byName.body.data.items.map((r: { quota: number }) => r.quota)).toEqual([10 * 500000]);

    // Admins list the orders with their usernames, filtered by one.
    const other = await makeUser(app());
    await app()
      .knex('top_ups')
      .insert({ user_id: other.id, amount: 3, money: 1, trade_no: 'OTHER-1', payment_method: 'zfb', create_time: 1, status: 'pending' });
    const all = await app().http().get('/api/user/topup').set(adminH);
    expect(all.body.success).toBe(true);
    expect(all.body.data.total).toBeGreaterThanOrEqual(2);
    const mine = await app().http().get('/api/user/topup').set(adminH).query({ username: user.username });
    expect(mine.body.data.total).toBe(1);
    // Each row carries the quota its amount buys (10 units at 500 000 quota per unit).
    expect(mine.body.data.items[0]).toMatchObject({ trade_no: form.out_trade_no, username: user.username, status: 'success', amount: 10, quota: 5_000_000 });
    const none = await app().http().get('/api/user/topup').set(adminH).query({ username: 'nobody-here' });
    expect(none.body.data).toMatchObject({ total: 0, items: [] });
    // Status and creation-time filters (the other order is pending, created at t=1).
    const pending = await app().http().get('/api/user/topup').set(adminH).query({ status: 'pending', username: other.username });
    expect(pending.body.data.items.map((r: { trade_no: string }) => r.trade_no)).toEqual(['OTHER-1']);
    const paid = await app().http().get('/api/user/topup').set(adminH).query({ status: 'success', username: other.username });
    expect(paid.body.data.total).toBe(0);
    const early = await app().http().get('/api/user/topup').set(adminH).query({ start_timestamp: 0, end_timestamp: 1 });
    expect(early.body.data.items.map((r: { trade_no: string }) => r.trade_no)).toEqual(['OTHER-1']);
    const late = await app().http().get('/api/user/topup').set(adminH).query({ start_timestamp: 2, username: other.username });
    expect(late.body.data.total).toBe(0);
    const badStatus = await app().http().get('/api/user/topup').set(adminH).query({ status: 'paid' });
    expect(badStatus.body.success).toBe(false);
    const badTime = await app().http().get('/api/user/topup').set(adminH).query({ start_timestamp: 'soon' });
    expect(badTime.body.success).toBe(false);
    // Users cannot list everyone's orders, whatever the filter; visitors are asked to log in.
    const refused = await app().http().get('/api/user/topup').set(headers).query({ username: user.username });
    expect(refused.status).toBe(403);
    expect(refused.body.success).toBe(false);
    expect(JSON.stringify(refused.body)).not.toContain(String(form.out_trade_no));
    expect((await app().http().get('/api/user/topup')).status).toBe(401);
  });

  it("lists the caller's orders and redeemed codes together, newest first, without code keys", async () => {
    const other = await makeUser(app(), { quota: 0 });
    const now = Math.floor(Date.now() / 1000);
    const ins = (row: Record<string, unknown>) =>
      app()
        .knex('redemptions')
        .insert({ user_id: 1, status: 3, created_time: now - 100, ...row });
    await ins({ key: 'k'.repeat(32), name: 'mine-new', quota: 250000, used_user_id: user.id, redeemed_time: now + 10 });
    await ins({ key: 'j'.repeat(32), name: 'mine-deleted', quota: 65, used_user_id: user.id, redeemed_time: now + 5, deleted_at: now });
    await ins({ key: 'h'.repeat(32), name: 'someone-else', quota: 1, used_user_id: other.id, redeemed_time: now + 20 });
    await ins({ key: 'g'.repeat(32), name: 'unused', quota: 1, used_user_id: 0, redeemed_time: 0, status: 1 });
    const res = await app().http().get('/api/user/topup/self').set(headers);
    expect(res.body.success).toBe(true);
    const rows = res.body.data as Array<Record<string, unknown>>;
    expect(rows.map((r) => [r.kind, r.trade_no])).toEqual([
      ['redemption', 'mine-new'],
      ['redemption', 'mine-deleted'],
      ['order', expect.any(String)],
    ]);
    expect(rows[0]).toMatchObject({ payment_method: 'redemption', status: 'success', quota: 250000, amount: 0.5, money: 0 });
    expect(rows[2]).toMatchObject({ payment_method: 'wx', status: 'success', amount: 10, quota: 5000000 });
    expect(JSON.stringify(rows)).not.toContain('k'.repeat(32));
  });

  it('needs a login', async () => {
    const res = await app().http().post('/api/user/pay').send({ amount: 10 });
    expect(res.status).toBe(401);
  });
});
