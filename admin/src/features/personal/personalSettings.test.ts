import { describe, expect, it } from 'vitest';
import {
  authorizeUrl,
  avatarLetter,
  bindingFlags,
  deleteProblem,
  emailBindProblem,
  inviteLink,
  isHttpsUrl,
  parseSetting,
  passwordProblem,
  roleInfo,
  settingBody,
  settingProblem,
  THRESHOLD_PRESETS,
  transferProblem,
  visibleModels,
} from './personalSettings';
import { personalMessages } from './messages';

describe('user setting', () => {
  it('fills defaults for a missing or broken setting (email, 500000)', () => {
    const d = parseSetting('');
    expect(d).toEqual({
      notify_type: 'email',
      quota_warning_threshold: 500000,
      webhook_url: '',
      webhook_secret: '',
      notification_email: '',
      accept_unset_model_ratio_model: false,
    });
    expect(parseSetting('{bad')).toEqual(d);
    expect(parseSetting('[1]')).toEqual(d);
    expect(parseSetting(null)).toEqual(d);
  });

  it('reads the stored values', () => {
    const s = parseSetting(
      JSON.stringify({
        notify_type: 'webhook',
        quota_warning_threshold: 100000,
        webhook_url: 'https://h.example/x',
        webhook_secret: 's',
        notification_email: 'a@b.co',
        accept_unset_model_ratio_model: true,
      }),
    );
    expect(s.notify_type).toBe('webhook');
    expect(s.quota_warning_threshold).toBe(100000);
    expect(s.webhook_url).toBe('https://h.example/x');
    expect(s.accept_unset_model_ratio_model).toBe(true);
    expect(parseSetting({ notify_type: 'sms' }).notify_type).toBe('email');
  });

  it('has the threshold presets', () => {
    expect(THRESHOLD_PRESETS.map((p) => [p.value, p.label])).toEqual([
      [100000, '0.2$'],
      [500000, '1$'],
      [1000000, '5$'],
      [5000000, '10$'],
    ]);
  });

  it('requires an https webhook URL for webhook notifications', () => {
    const base = parseSetting('');
    expect(settingProblem(base)).toBeNull();
    expect(settingProblem({ ...base, notify_type: 'webhook' })).toEqual({ key: 'feat.personal.notify.webhook_empty' });
    expect(settingProblem({ ...base, notify_type: 'webhook', webhook_url: 'http://h.example/x' })).toEqual({ key: 'feat.personal.notify.webhook_https' });
    expect(settingProblem({ ...base, notify_type: 'webhook', webhook_url: 'not a url' })).toEqual({ key: 'feat.personal.notify.webhook_https' });
    expect(settingProblem({ ...base, notify_type: 'webhook', webhook_url: 'https://h.example/x' })).toBeNull();
    // an http URL left over from a webhook setting does not block email notifications
    expect(settingProblem({ ...base, webhook_url: 'http://h.example/x' })).toBeNull();
  });

  it('refuses a non-positive threshold and a bad notification email', () => {
    const base = parseSetting('');
    expect(settingProblem({ ...base, quota_warning_threshold: 0 })).toEqual({ key: 'feat.personal.notify.threshold_invalid' });
    expect(settingProblem({ ...base, quota_warning_threshold: NaN })).toEqual({ key: 'feat.personal.notify.threshold_invalid' });
    expect(settingProblem({ ...base, notification_email: 'nope' })).toEqual({ key: 'feat.personal.notify.email_invalid' });
    expect(settingProblem({ ...base, notification_email: 'me@mail.example' })).toBeNull();
  });

  it('builds the PUT body with an integer threshold and trimmed fields', () => {
    const body = settingBody({ ...parseSetting(''), quota_warning_threshold: 123.7, webhook_url: ' https://x.example ', notification_email: ' a@b.co ' });
    expect(body.quota_warning_threshold).toBe(123);
    expect(body.webhook_url).toBe('https://x.example');
    expect(body.notification_email).toBe('a@b.co');
    expect(Object.keys(body).sort()).toEqual([
      'accept_unset_model_ratio_model',
      'notification_email',
      'notify_type',
      'quota_warning_threshold',
      'webhook_secret',
      'webhook_url',
    ]);
  });

  it('checks https urls', () => {
    expect(isHttpsUrl('https://a.example')).toBe(true);
    expect(isHttpsUrl('http://a.example')).toBe(false);
    expect(isHttpsUrl('https://')).toBe(false);
  });
});

describe('dialogs', () => {
  it('delete needs the exact own username', () => {
    expect(deleteProblem('', 'alice')).toEqual({ key: 'feat.personal.delete.mismatch' });
    expect(deleteProblem('Alice', 'alice')).toEqual({ key: 'feat.personal.delete.mismatch' });
    expect(deleteProblem('alice', 'alice')).toBeNull();
    expect(deleteProblem('', '')).toEqual({ key: 'feat.personal.delete.mismatch' });
  });

  it('password: filled, at least 8, confirmation equal', () => {
    expect(passwordProblem({ original: '', password: 'abcdefgh', confirm: 'abcdefgh' })).toEqual({ key: 'feat.personal.password.empty' });
    expect(passwordProblem({ original: '', password: 'abcdefgh', confirm: 'abcdefgh' }, false)).toBeNull();
    expect(passwordProblem({ original: 'old', password: '', confirm: '' })).toEqual({ key: 'feat.personal.password.empty' });
    expect(passwordProblem({ original: 'old', password: 'short', confirm: 'short' })).toEqual({ key: 'feat.personal.password.short' });
    expect(passwordProblem({ original: 'old', password: 'abcdefgh', confirm: 'abcdefgX' })).toEqual({ key: 'feat.personal.password.mismatch' });
    expect(passwordProblem({ original: 'old', password: 'abcdefgh', confirm: 'abcdefgh' })).toBeNull();
  });

  it('email binding: email first, then code', () => {
    expect(emailBindProblem('', '')).toEqual({ key: 'feat.personal.bind.email_empty' });
    expect(emailBindProblem('a@b.co', ' ')).toEqual({ key: 'feat.personal.bind.code_empty' });
    expect(emailBindProblem('a@b.co', '', false)).toBeNull();
    expect(emailBindProblem('a@b.co', '123456')).toBeNull();
  });

  it('transfer: at least quota_per_unit, at most the earnings', () => {
    expect(transferProblem(499999, 500000, 10_000_000)).toEqual({ key: 'feat.personal.aff.min', values: { amount: 500000 } });
    expect(transferProblem(NaN, 500000, 10_000_000)).toEqual({ key: 'feat.personal.aff.min', values: { amount: 500000 } });
    expect(transferProblem(600000, 500000, 550000)).toEqual({ key: 'feat.personal.aff.insufficient' });
    expect(transferProblem(500000, 500000, 500000)).toBeNull();
  });
});

describe('display', () => {
  it('invitation link', () => {
    expect(inviteLink('https://gw.example', 'Ab12')).toBe('https://gw.example/register?aff=Ab12');
    expect(inviteLink('https://gw.example/', 'a b')).toBe('https://gw.example/register?aff=a%20b');
  });

  it('shows 10 models collapsed, all expanded', () => {
    const models = Array.from({ length: 13 }, (_, i) => `m${i}`);
    expect(visibleModels(models, false)).toEqual(models.slice(0, 10));
    expect(visibleModels(models, true)).toEqual(models);
    expect(visibleModels(['a'], false)).toEqual(['a']);
  });

  it('role tags', () => {
    expect(roleInfo(100).key).toBe('feat.personal.role.root');
    expect(roleInfo(10).key).toBe('feat.personal.role.admin');
    expect(roleInfo(1).key).toBe('feat.personal.role.user');
  });

  it('bindings per status flags', () => {
    expect(bindingFlags({})).toEqual({ github: false, oidc: false, linuxdo: false, wechat: false, telegram: false });
    expect(bindingFlags({ github_oauth: true, oidc_enabled: true, linuxdo_oauth: 'true', wechat_login: true, telegram_oauth: true })).toEqual({
      github: true,
      oidc: true,
      linuxdo: true,
      wechat: true,
      telegram: false,
    });
    expect(bindingFlags({ telegram_oauth: true, telegram_bot_name: 'bot' }).telegram).toBe(true);
    expect(authorizeUrl('github')).toBe('/api/oauth/github/authorize');
  });

  it('avatar letter', () => {
    expect(avatarLetter('alice')).toBe('A');
    expect(avatarLetter('')).toBe('?');
    expect(avatarLetter('张三')).toBe('张');
  });
});

describe('messages', () => {
  it('English uses the product wording', () => {
    const en = personalMessages.en.feat.personal;
    expect(en.delete.mismatch).toBe('Please enter your account name to confirm deletion!');
    expect(en.delete.ok).toBe('Account deleted!');
    expect(en.password.mismatch).toBe('The two passwords do not match!');
    expect(en.password.ok).toBe('Password changed successfully!');
    expect(en.bind.email_empty).toBe('Please enter email!');
    expect(en.bind.code_empty).toBe('Please enter email verification code!');
    expect(en.aff.min).toBe('Minimum transfer amount is {{amount}}');
    expect(en.security.token_ok).toBe('Token reset and copied to clipboard');
    expect(en.notify.ok).toBe('Notification settings updated');
  });

  it('has the same keys in both languages', () => {
    const keys = (o: unknown, p = ''): string[] =>
      o && typeof o === 'object' ? Object.entries(o as Record<string, unknown>).flatMap(([k, v]) => keys(v, `${p}${k}.`)) : [p];
    expect(keys(personalMessages.en).sort()).toEqual(keys(personalMessages.zh).sort());
  });
});

describe('translation keys used by the personal screens', () => {
  it('exist in zh and en', async () => {
    const fs = await import('node:fs');
    const path = await import('node:path');
    const dir = path.dirname(new URL(import.meta.url).pathname);
    const { personalMessages: msgs } = await import('./messages');
    const lookup = (tree: unknown, key: string) =>
      key.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), tree);
    const used = new Set<string>();
    for (const file of fs.readdirSync(dir).filter((n: string) => n.endsWith('.tsx') || (n.endsWith('.ts') && !n.endsWith('.test.ts')))) {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      for (const m of text.matchAll(/'(feat\.personal\.[a-z_.]+[a-z_])'/g)) used.add(m[1]);
    }
    expect(used.size).toBeGreaterThan(10);
    for (const key of used) {
      expect(typeof lookup(msgs.zh, key), `zh ${key}`).toBe('string');
      expect(typeof lookup(msgs.en, key), `en ${key}`).toBe('string');
    }
  });
});
