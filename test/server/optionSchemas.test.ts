import { DB_TARGETS, describeEach, loginAgent, setupRoot, type LoggedIn } from '../helpers/app';
import { DEFAULT_OPTIONS } from '../../seeds/defaultOptions';
import { OPTION_RULES, uncoveredOptions } from '../../seeds/optionSchemas';
import { normaliseOption } from '../../server/src/services/options';

describe('option rules', () => {
  it('every option has a rule and every default passes its own rule unchanged', () => {
    expect(uncoveredOptions()).toEqual({ noRule: [], noDefault: [] });
    for (const [key, value] of Object.entries(DEFAULT_OPTIONS)) {
      expect([key, normaliseOption(key, value)]).toEqual([key, OPTION_RULES[key]!(key, value)]);
      expect(() => normaliseOption(key, value)).not.toThrow();
    }
  });

  it('refuses keys inherited from Object.prototype', () => {
    expect(() => normaliseOption('constructor', 'x')).toThrow(/Unknown setting: constructor/);
  });
});

/** PUT /api/option/ refuses out-of-range and malformed values, naming the option, and stores nothing. */
describeEach(DB_TARGETS, 'option value ranges', (app) => {
  let root: LoggedIn;
  beforeAll(async () => {
    const r = await setupRoot(app());
    root = await loginAgent(app(), r.username, r.password);
  });
  const put = (key: string, value: unknown) => root.put('/api/option/').send({ key, value });
  const stored = async (key: string) => (await app().knex('options').where({ key }).first())?.value as string | undefined;

  const BAD: Array<[string, unknown, RegExp]> = [
    ['QuotaForNewUser', '-1', /QuotaForNewUser.*0 到/],
    ['QuotaForNewUser', '1.5', /QuotaForNewUser.*整数/],
    ['PreConsumedQuota', '-1', /PreConsumedQuota/],
    ['RetryTimes', '1e20', /RetryTimes.*0 到 10.*整数/],
    ['RetryTimes', '11', /RetryTimes/],
    ['QuotaPerUnit', '1e20', /QuotaPerUnit/],
    ['QuotaPerUnit', '0', /QuotaPerUnit.*大于 0/],
    ['Price', '-1', /Price/],
    ['ChannelDisableThreshold', '-1', /ChannelDisableThreshold/],
    ['UserUsableGroups', '[]', /UserUsableGroups/],
    ['UserUsableGroups', '{}', /UserUsableGroups/],
    ['UserUsableGroups', '{"vip": 3}', /UserUsableGroups/],
    ['GroupRatio', '{"default": -1}', /GroupRatio.*default/],
    ['GroupRatio', '{}', /GroupRatio/],
    ['GroupRatio', 'not json', /GroupRatio.*JSON/],
    ['ModelRatio', '{"gpt-4o": -0.5}', /ModelRatio.*gpt-4o/],
    ['ModelPrice', '{"dall-e-3": -1}', /ModelPrice/],
    ['ModelPrice', '{"dall-e-3": "1"}', /ModelPrice/],
    ['CompletionRatio', '[1,2]', /CompletionRatio/],
    ['Chats', '{"a": 1}', /Chats/],
    ['claude.default_max_tokens', '{"default": 0}', /claude.default_max_tokens/],
    ['gemini.supported_imagine_models', '"x"', /gemini.supported_imagine_models/],
    ['SMTPPort', '70000', /SMTPPort/],
    ['DataExportDefaultTime', 'year', /DataExportDefaultTime/],
    ['DataExportInterval', '0', /DataExportInterval/],
    ['LinuxDOMinimumTrustLevel', '9', /LinuxDOMinimumTrustLevel/],
    ['ServerAddress', 'javascript:alert(1)', /ServerAddress/],
    ['TurnstileVerifyURL', 'file:///etc/passwd', /TurnstileVerifyURL/],
    ['fetch_setting.ip_allow_list', '10.0.0.0/33', /fetch_setting.ip_allow_list.*10.0.0.0\/33/],
    ['fetch_setting.ip_deny_list', 'not-an-ip', /fetch_setting.ip_deny_list/],
    ['fetch_setting.allowed_ports', '80,99999', /fetch_setting.allowed_ports.*99999/],
    ['fetch_setting.domain_deny_list', 'bad_domain!', /fetch_setting.domain_deny_list/],
    ['fetch_setting.ssrf_protection_enabled', 'off', /true 或 false/],
  ];

  it('refuses each bad value with a message naming the option; the stored value stays', async () => {
    const snapshot = Object.fromEntries((await app().knex('options').select('key', 'value')).map((r: { key: string; value: string }) => [r.key, r.value]));
    const memory = app().ctx.options.all();
    for (const [key, value, message] of BAD) {
      const res = await put(key, value);
      expect(res.status).toBe(200);
      expect([key, value, res.body.success]).toEqual([key, value, false]);
      expect(res.body.message).toMatch(message);
    }
    const after = Object.fromEntries((await app().knex('options').select('key', 'value')).map((r: { key: string; value: string }) => [r.key, r.value]));
    expect(after).toEqual(snapshot);
    expect(app().ctx.options.all()).toEqual(memory);
  });

  it('accepts values at the edges of the ranges, normalising lists', async () => {
    for (const [key, value] of [
      ['RetryTimes', '10'],
      ['QuotaForNewUser', '0'],
      ['ChannelDisableThreshold', '0'],
      ['GroupRatio', '{"default": 0, "vip": 2}'],
      ['UserUsableGroups', '{"default": "默认分组"}'],
    ]) {
      const res = await put(key!, value);
      expect([key, res.body.success, res.body.message]).toEqual([key, true, '']);
      expect(await stored(key!)).toBe(value);
    }
    expect((await put('fetch_setting.allowed_ports', ' 443, 80 ,443 ')).body.success).toBe(true);
    expect(await stored('fetch_setting.allowed_ports')).toBe('443,80');
    expect((await put('fetch_setting.ip_allow_list', '10.0.0.0/8, fd00::/8\n192.168.1.5')).body.success).toBe(true);
    expect(await stored('fetch_setting.ip_allow_list')).toBe('10.0.0.0/8\nfd00::/8\n192.168.1.5');
  });
});
