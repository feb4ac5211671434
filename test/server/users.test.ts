import { DB_TARGETS, describeEach, loginAgent, makeUser, setupRoot, type LoggedIn } from '../helpers/app';

describeEach(DB_TARGETS, 'user administration', (app) => {
  let root: LoggedIn;
  let rootId: number;
  let admin: LoggedIn;
  let adminId: number;
  let other: { id: number };
  let plain: LoggedIn;
  let plainId: number;

  beforeAll(async () => {
    const r = await setupRoot(app());
    rootId = r.id;
    root = await loginAgent(app(), r.username, r.password);
    const a = await makeUser(app(), { username: 'admin1', role: 10 });
    adminId = a.id;
    admin = await loginAgent(app(), a.username, a.password);
    other = await makeUser(app(), { username: 'admin2', role: 10 });
    const p = await makeUser(app(), { username: 'plain1' });
    plainId = p.id;
    plain = await loginAgent(app(), p.username, p.password);
  });

  it('forbids every admin endpoint to an ordinary user (403) and to strangers (401)', async () => {
    expect((await plain.get('/api/user/')).status).toBe(403);
    expect((await plain.get('/api/user/search?keyword=a')).status).toBe(403);
    expect((await plain.get(`/api/user/${rootId}`)).status).toBe(403);
    expect((await plain.post('/api/user/').send({ username: 'x1', password: '12345678' })).status).toBe(403);
    expect((await plain.put('/api/user/').send({ id: plainId, quota: 999999 })).status).toBe(403);
    expect((await plain.post('/api/user/manage').send({ id: plainId, action: 'promote' })).status).toBe(403);
    expect((await app().http().get('/api/user/')).status).toBe(401);
    const row = await app().knex('users').where({ id: plainId }).first();
    expect(row.role).toBe(1);
    expect(Number(row.quota)).toBe(0);
  });

  it('lists users with paging, never with secrets, and flags deregistered users', async () => {
    await app()
      .knex('users')
      .where({ id: plainId })
      .update({ access_token: 'a'.repeat(32) });
    const gone = await makeUser(app(), { username: 'gone1' });
    await app().knex('users').where({ id: gone.id }).update({ deleted_at: 1700000000 });
    const page1 = await admin.get('/api/user/?p=1&page_size=2');
    expect(page1.body.success).toBe(true);
    expect(page1.body.data).toMatchObject({ page: 1, page_size: 2 });
    expect(page1.body.data.items).toHaveLength(2);
    const all = await admin.get('/api/user/?p=1&page_size=100');
    expect(all.body.data.total).toBe(all.body.data.items.length);
    expect(all.body.data.total).toBeGreaterThanOrEqual(5);
    for (const u of all.body.data.items) {
      expect(u).not.toHaveProperty('password');
      expect(u).not.toHaveProperty('access_token');
    }
    expect(JSON.stringify(all.body)).not.toContain('a'.repeat(32));
    const goneRow = all.body.data.items.find((u: { id: number }) => u.id === gone.id);
    expect(goneRow.DeletedAt).toBe(1700000000);
    expect(all.body.data.items.find((u: { id: number }) => u.id === plainId).DeletedAt).toBeNull();
  });

  it('searches by id, username, email and display name, with a group filter', async () => {
    const u = await makeUser(app(), { username: 'findme', group: 'vip' });
    await app().knex('users').where({ id: u.id }).update({ email: 'Seek@Mail.com', display_name: 'Hidden Gem' });
    const ids = async (q: string) => (await admin.get(`/api/user/search?${q}`)).body.data.items.map((x: { id: number }) => x.id);
    expect(await ids('keyword=findm')).toContain(u.id);
    expect(await ids('keyword=seek%40mail')).toContain(u.id);
    expect(await ids('keyword=hidden')).toContain(u.id);
    expect(await ids(`keyword=${u.id}`)).toContain(u.id);
    expect(await ids('keyword=findme&group=vip')).toEqual([u.id]);
    expect(await ids('keyword=findme&group=default')).toEqual([]);
    expect(await ids('keyword=%25')).toEqual([]);
  });

  it('creates users with the product messages; an admin cannot create its own role or higher', async () => {
    const empty = await admin.post('/api/user/').send({ username: '', password: '' });
    expect(empty.body).toEqual({ success: false, message: 'Username and password cannot be empty!', data: null });
    const short = await admin.post('/api/user/').send({ username: 'newbie', password: '123' });
    expect(short.body.success).toBe(false);
    const ok = await admin.post('/api/user/').send({ username: 'newbie', display_name: 'Newbie', password: '12345678' });
    expect(ok.body).toMatchObject({ success: true, data: { username: 'newbie', display_name: 'Newbie', role: 1 } });
    expect(ok.body.data).not.toHaveProperty('password');
    expect(typeof ok.body.data.id).toBe('number');
    const dup = await admin.post('/api/user/').send({ username: 'newbie', password: '12345678' });
    expect(dup.body.success).toBe(false);
    const asAdmin = await admin.post('/api/user/').send({ username: 'boss', password: '12345678', role: 10 });
    expect(asAdmin.body.success).toBe(false);
    expect(await app().knex('users').where({ username: 'boss' }).first()).toBeUndefined();
    expect((await app().http().post('/api/user/login').send({ username: 'newbie', password: '12345678' })).body.success).toBe(true);
  });

  it('gets one user; an admin cannot read same-or-higher roles', async () => {
    const one = await admin.get(`/api/user/${plainId}`);
    expect(one.body).toMatchObject({ success: true, data: { id: plainId, username: 'plain1' } });
    expect(one.body.data).not.toHaveProperty('password');
    expect((await admin.get(`/api/user/${rootId}`)).body.success).toBe(false);
    expect((await admin.get(`/api/user/${other.id}`)).body.success).toBe(false);
    expect((await root.get(`/api/user/${other.id}`)).body.success).toBe(true);
  });

  it('updates a user: fields left out keep their value, quota change is logged, role is not settable', async () => {
    const u = await makeUser(app(), { username: 'edit1', quota: 1000 });
    const before = await app().knex('users').where({ id: u.id }).first();
    const res = await admin.put('/api/user/').send({ id: u.id, display_name: 'Edited', quota: '5000', group: 'vip', remark: 'note', role: 100 });
    expect(res.body).toMatchObject({ success: true, data: { id: u.id, display_name: 'Edited', quota: 5000, group: 'vip', remark: 'note', role: 1 } });
    const after = await app().knex('users').where({ id: u.id }).first();
    expect(after.password).toBe(before.password);
    expect(after.role).toBe(1);
    const logs = await app().knex('logs').where({ user_id: u.id, type: 3 });
    expect(logs).toHaveLength(1);
    expect(Number(logs[0].quota)).toBe(4000);
    expect((await app().http().post('/api/user/login').send({ username: 'edit1', password: u.password })).body.success).toBe(true);

    const pw = await admin.put('/api/user/').send({ id: u.id, password: 'changed123' });
    expect(pw.body.success).toBe(true);
    expect((await app().http().post('/api/user/login').send({ username: 'edit1', password: 'changed123' })).body.success).toBe(true);

    for (const bad of [
      { id: u.id, quota: 1.5 },
      { id: u.id, quota: 'abc' },
      { id: u.id, quota: -1 },
      { id: u.id, password: 'short' },
      { id: u.id, email: 'not-an-email' },
    ]) {
      const r = await admin.put('/api/user/').send(bad);
      expect(r.status).toBe(200);
      expect(r.body.success).toBe(false);
    }
    const unchanged = await app().knex('users').where({ id: u.id }).first();
    expect(Number(unchanged.quota)).toBe(5000);
    expect(unchanged.email).toBe('');
    // Console forms may send null for untouched fields: treated as left out.
    const nulls = await admin.put('/api/user/').send({ id: u.id, remark: null, email: null, password: null, quota: null, display_name: 'Edited2' });
    expect(nulls.body).toMatchObject({ success: true, data: { display_name: 'Edited2', remark: 'note', quota: 5000 } });
  });

  it('an admin cannot edit another admin or root; root can edit an admin', async () => {
    expect((await admin.put('/api/user/').send({ id: other.id, quota: 123 })).body.success).toBe(false);
    expect((await admin.put('/api/user/').send({ id: rootId, display_name: 'pwned' })).body.success).toBe(false);
    expect(Number((await app().knex('users').where({ id: other.id }).first()).quota)).toBe(0);
    expect((await app().knex('users').where({ id: rootId }).first()).display_name).not.toBe('pwned');
    expect((await root.put('/api/user/').send({ id: other.id, quota: 123 })).body.success).toBe(true);
    expect((await admin.put('/api/user/').send({ id: adminId, quota: 10 ** 12 })).body.success).toBe(false);
    expect(Number((await app().knex('users').where({ id: adminId }).first()).quota)).toBe(0);
    const rootSelf = await root.put('/api/user/').send({ id: rootId, quota: 777, role: 1 });
    expect(rootSelf.body).toMatchObject({ success: true, data: { quota: 777, role: 100 } });
  });

  it('manage: admin vs admin, admin promoting, root protections', async () => {
    const manage = (who: LoggedIn, id: number, action: string) => who.post('/api/user/manage').send({ id, action });
    // admin on admin
    for (const action of ['disable', 'demote', 'delete', 'enable']) {
      expect((await manage(admin, other.id, action)).body.success).toBe(false);
    }
    // admin on root
    for (const action of ['disable', 'demote', 'delete']) {
      expect((await manage(admin, rootId, action)).body.success).toBe(false);
    }
    // root on root
    expect((await manage(root, rootId, 'disable')).body).toMatchObject({ success: false, message: '无法禁用超级管理员用户' });
    expect((await manage(root, rootId, 'delete')).body).toMatchObject({ success: false, message: '无法删除超级管理员用户' });
    expect((await manage(root, rootId, 'demote')).body).toMatchObject({ success: false, message: '无法降级超级管理员用户' });
    const rootRow = await app().knex('users').where({ id: rootId }).first();
    expect(rootRow).toMatchObject({ role: 100, status: 1, deleted_at: null });
    const otherRow = await app().knex('users').where({ id: other.id }).first();
    expect(otherRow).toMatchObject({ role: 10, status: 1, deleted_at: null });

    // an admin cannot promote to admin; root can
    const u = await makeUser(app(), { username: 'climber' });
    expect((await manage(admin, u.id, 'promote')).body).toMatchObject({ success: false, message: '普通管理员用户无法提升其他用户为管理员' });
    expect((await app().knex('users').where({ id: u.id }).first()).role).toBe(1);
    expect((await manage(root, u.id, 'promote')).body).toEqual({ success: true, message: expect.any(String), data: { status: 1, role: 10 } });
    expect((await manage(root, u.id, 'promote')).body.success).toBe(false);
    expect((await manage(root, u.id, 'demote')).body).toMatchObject({ success: true, data: { status: 1, role: 1 } });
    expect((await manage(root, u.id, 'demote')).body.success).toBe(false);

    // admin on an ordinary user
    const s = await loginAgent(app(), 'climber', 'password123');
    expect((await manage(admin, u.id, 'disable')).body).toMatchObject({ success: true, data: { status: 2, role: 1 } });
    expect((await s.get('/api/user/self')).status).toBe(401);
    expect((await app().http().post('/api/user/login').send({ username: 'climber', password: 'password123' })).body.success).toBe(false);
    expect((await manage(admin, u.id, 'enable')).body).toMatchObject({ success: true, data: { status: 1, role: 1 } });
    expect((await manage(admin, u.id, 'delete')).body).toMatchObject({ success: true });
    const deleted = await app().knex('users').where({ id: u.id }).first();
    expect(deleted.deleted_at).not.toBeNull();
    expect((await manage(admin, u.id, 'enable')).body.success).toBe(false);
    expect((await admin.get(`/api/user/${u.id}`)).body.data.DeletedAt).toBe(Number(deleted.deleted_at));

    const frozen = await makeUser(app(), { username: 'frozen3' });
    await app().knex('users').where({ id: frozen.id }).update({ status: 3 });
    expect((await manage(admin, frozen.id, 'enable')).body.success).toBe(false);
    expect((await app().knex('users').where({ id: frozen.id }).first()).status).toBe(3);

    expect((await manage(admin, plainId, 'explode')).body.success).toBe(false);
    expect((await manage(admin, 999999, 'disable')).body).toMatchObject({ success: false, message: '用户不存在' });
  });

  it('an admin never acts on itself through manage', async () => {
    expect((await admin.post('/api/user/manage').send({ id: adminId, action: 'demote' })).body.success).toBe(false);
    expect((await app().knex('users').where({ id: adminId }).first()).role).toBe(10);
  });
});
