import { DB_TARGETS, describeEach } from '../helpers/app';
import { startSmtp, mailCode, type TestSmtp } from '../helpers/smtp';
import { sendMail } from '../../server/src/services/mail';
import { BadRequestError } from '../../server/src/lib/errors';

describeEach(DB_TARGETS, 'mail sending', (app) => {
  let smtp: TestSmtp;
  beforeAll(async () => {
    smtp = await startSmtp({ user: 'gateway@test.local', password: 'smtp-secret' });
  });
  afterAll(async () => {
    await smtp.close();
  });

  const configure = async (over: Record<string, string> = {}) => {
    const o = app().ctx.options;
    const values = {
      SMTPServer: '127.0.0.1',
      SMTPPort: String(smtp.port),
      SMTPAccount: 'gateway@test.local',
      SMTPToken: 'smtp-secret',
      SMTPFrom: 'noreply@test.local',
      SMTPSSLEnabled: 'false',
      ...over,
    };
    for (const [k, v] of Object.entries(values)) await o.set(k, v);
  };

  it('refuses to send when SMTP is not configured', async () => {
    await expect(sendMail(app().ctx, 'a@example.com', 'hi', '<p>hi</p>')).rejects.toBeInstanceOf(BadRequestError);
    await expect(sendMail(app().ctx, 'a@example.com', 'hi', '<p>hi</p>')).rejects.toThrow(/SMTP is not configured/);
  });

  it('delivers through a real SMTP server with login, from address and a non-ASCII subject', async () => {
    await configure();
    const before = smtp.mails.length;
    await sendMail(app().ctx, 'reader@example.com', '测试邮件 subject', '<p>Hello <strong>123456</strong></p>');
    const m = await smtp.waitFor('reader@example.com', before);
    expect(m.authUser).toBe('gateway@test.local');
    expect(m.from).toBe('noreply@test.local');
    expect(m.subject).toBe('测试邮件 subject');
    expect(mailCode(m)).toBe('123456');
  });

  it('reports a refused login as a clean error without leaking the SMTP secret', async () => {
    await configure({ SMTPToken: 'wrong-secret' });
    const err = await sendMail(app().ctx, 'x@example.com', 's', 'b').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(String((err as Error).message)).not.toContain('wrong-secret');
    expect(smtp.mails.some((m) => m.to.includes('x@example.com'))).toBe(false);
    await configure();
  });
});
