import { describe, expect, it } from 'vitest';
import {
  addModel,
  batchSet,
  canonicalJson,
  changedOptions,
  changedRatioOptions,
  checkWhitelistDomain,
  completionTokenPrice,
  filterRows,
  invalidJsonKeys,
  isJsonText,
  isNewerVersion,
  numberRule,
  numericError,
  oidcEndpoints,
  oneMonthAgo,
  optionsFromRows,
  pageOf,
  ratiosFromPrices,
  rowMode,
  rowsFromOptions,
  saveChanges,
  setRowMode,
  stripTrailingSlash,
  toOptionMap,
  tokenPrice,
  unsetModels,
  visibleTabs,
  type PriceRow,
} from './settingOptions';

const row = (name: string, p: Partial<PriceRow> = {}): PriceRow => ({ name, price: '', ratio: '', completionRatio: '', cacheRatio: '', ...p });

describe('options map and diff', () => {
  it('turns the GET list into a map', () => {
    expect(toOptionMap([{ key: 'A', value: '1' }, { key: 'B', value: null }, { nope: 1 }])).toEqual({ A: '1', B: '' });
    expect(toOptionMap(null)).toEqual({});
  });

  it('answers only changed keys: switches off first, then others, then switches on', () => {
    const initial = { RegisterEnabled: 'true', GitHubOAuthEnabled: 'false', GitHubClientId: '', SystemName: 'x', Price: '7.3' };
    const current = { RegisterEnabled: 'false', GitHubOAuthEnabled: 'true', GitHubClientId: 'cid', SystemName: 'x', Price: '7.3' };
    expect(changedOptions(initial, current)).toEqual([
      { key: 'RegisterEnabled', value: 'false' },
      { key: 'GitHubClientId', value: 'cid' },
      { key: 'GitHubOAuthEnabled', value: 'true' },
    ]);
  });

  it('sends secrets only when non-empty (they are never loaded)', () => {
    expect(changedOptions({ GitHubClientSecret: '' }, { GitHubClientSecret: '' })).toEqual([]);
    expect(changedOptions({ GitHubClientSecret: '' }, { GitHubClientSecret: 's3' })).toEqual([{ key: 'GitHubClientSecret', value: 's3' }]);
    expect(changedOptions({ SMTPToken: '' }, { SMTPToken: 'pw' })).toEqual([{ key: 'SMTPToken', value: 'pw' }]);
  });

  it('nothing changed → empty', () => {
    expect(changedOptions({ A: '1', XEnabled: 'true' }, { A: '1', XEnabled: 'true' })).toEqual([]);
  });

  it('saves one call per key and reports ok / partial / failed / nothing', async () => {
    const calls: string[] = [];
    const ok = await saveChanges(
      [
        { key: 'A', value: '1' },
        { key: 'B', value: '2' },
      ],
      async (k, v) => void calls.push(`${k}=${v}`),
    );
    expect(calls).toEqual(['A=1', 'B=2']);
    expect(ok.outcome).toBe('ok');
    const partial = await saveChanges(
      [
        { key: 'A', value: '1' },
        { key: 'B', value: '2' },
      ],
      async (k) => {
        if (k === 'B') throw new Error('refused B');
      },
    );
    expect(partial).toEqual({ outcome: 'partial', saved: ['A'], errors: [{ key: 'B', message: 'refused B' }] });
    const failed = await saveChanges([{ key: 'A', value: '1' }], async () => {
      throw new Error('no');
    });
    expect(failed.outcome).toBe('failed');
    expect((await saveChanges([], async () => undefined)).outcome).toBe('nothing');
  });
});

describe('validations', () => {
  it('JSON text', () => {
    expect(isJsonText('{"a":1}')).toBe(true);
    expect(isJsonText('')).toBe(true);
    expect(isJsonText('{a:1}')).toBe(false);
    expect(invalidJsonKeys({ ModelRatio: '{', GroupRatio: '{}' }, ['ModelRatio', 'GroupRatio', 'Chats'])).toEqual(['ModelRatio']);
  });

  it('number rules: rate limit, thinking budget, ping', () => {
    expect(numberRule('ModelRequestRateLimitCount', '0')).toBeNull();
    expect(numberRule('ModelRequestRateLimitCount', '-1')).toBe('feat.setting.err.min0');
    expect(numberRule('ModelRequestRateLimitDurationMinutes', '-1')).toBe('feat.setting.err.min0');
    expect(numberRule('ModelRequestRateLimitSuccessCount', '0')).toBe('feat.setting.err.min1');
    expect(numberRule('ModelRequestRateLimitSuccessCount', '1')).toBeNull();
    expect(numberRule('gemini.thinking_adapter_budget_tokens_percentage', '0.05')).toBe('feat.setting.err.budget');
    expect(numberRule('claude.thinking_adapter_budget_tokens_percentage', '1.1')).toBe('feat.setting.err.budget');
    expect(numberRule('claude.thinking_adapter_budget_tokens_percentage', '0.8')).toBeNull();
    expect(numberRule('general_setting.ping_interval_seconds', '0')).toBe('feat.setting.err.min1');
    expect(numberRule('general_setting.ping_interval_seconds', 'abc')).toBe('feat.setting.err.min1');
    expect(numberRule('RetryTimes', '-5')).toBeNull();
  });

  it('whitelist domains, URLs, OIDC discovery', () => {
    expect(checkWhitelistDomain(['gmail.com'], 'example.com')).toBeNull();
    expect(checkWhitelistDomain(['gmail.com'], 'GMAIL.com')).toBe('duplicate');
    expect(checkWhitelistDomain([], 'not a domain')).toBe('format');
    expect(checkWhitelistDomain([], 'localhost')).toBe('format');
    expect(stripTrailingSlash(' https://a.com/// ')).toBe('https://a.com');
    expect(oidcEndpoints({ authorization_endpoint: 'a', token_endpoint: 't', userinfo_endpoint: 'u' })).toEqual({
      authorization_endpoint: 'a',
      token_endpoint: 't',
      user_info_endpoint: 'u',
    });
    expect(oidcEndpoints({ issuer: 'x' })).toBeNull();
    expect(oidcEndpoints('nope')).toBeNull();
  });

  it('tabs: admins see the tabs, system is root-only, users none', () => {
    expect(visibleTabs(false, false)).toEqual([]);
    expect(visibleTabs(true, false)).toEqual(['operation', 'ratelimit', 'models']);
    expect(visibleTabs(true, true)).toEqual(['operation', 'ratelimit', 'models', 'system', 'other']);
  });

  it('clear-logs default and update check', () => {
    const d = oneMonthAgo(new Date(2026, 5, 15, 10, 0, 0));
    expect([d.getFullYear(), d.getMonth(), d.getDate()]).toEqual([2026, 4, 15]);
    expect(isNewerVersion('v1.2.3', 'v1.10.0')).toBe(true);
    expect(isNewerVersion('v1.2.3', 'v1.2.3')).toBe(false);
    expect(isNewerVersion('1.3.0', 'v1.2.9')).toBe(false);
  });
});

describe('ratio editor', () => {
  const opts = {
    ModelRatio: JSON.stringify({ 'gpt-4o': 1.25, 'both-model': 2 }),
    CompletionRatio: JSON.stringify({ 'gpt-4o': 4 }),
    CacheRatio: JSON.stringify({ 'gpt-4o': 0.5 }),
    ModelPrice: JSON.stringify({ 'dall-e-3': 0.04, 'both-model': 0.1 }),
  };

  it('options → rows (sorted, union of names)', () => {
    const rows = rowsFromOptions(opts);
    expect(rows.map((r) => r.name)).toEqual(['both-model', 'dall-e-3', 'gpt-4o']);
    expect(rows[2]).toEqual(row('gpt-4o', { ratio: '1.25', completionRatio: '4', cacheRatio: '0.5' }));
    expect(rowMode(rows[1]!)).toBe('per-request');
    expect(rowMode(rows[2]!)).toBe('per-token');
  });

  it('rows → options: a fixed price takes precedence over ratios', () => {
    const out = optionsFromRows(rowsFromOptions(opts));
    expect(JSON.parse(out.ModelPrice)).toEqual({ 'dall-e-3': 0.04, 'both-model': 0.1 });
    expect(JSON.parse(out.ModelRatio)).toEqual({ 'gpt-4o': 1.25 });
    expect(JSON.parse(out.CompletionRatio)).toEqual({ 'gpt-4o': 4 });
    expect(JSON.parse(out.CacheRatio)).toEqual({ 'gpt-4o': 0.5 });
  });

  it('derived prices: ratio × 2 and × completion ratio; prices back to ratios', () => {
    const r = row('m', { ratio: '1.25', completionRatio: '4' });
    expect(tokenPrice(r)).toBe('2.5');
    expect(completionTokenPrice(r)).toBe('10');
    expect(completionTokenPrice(row('m', { ratio: '1' }))).toBe('2');
    expect(tokenPrice(row('m'))).toBe('');
    expect(ratiosFromPrices('3', '15')).toEqual({ ratio: '1.5', completionRatio: '5' });
    expect(ratiosFromPrices('3', '')).toEqual({ ratio: '1.5', completionRatio: '' });
    expect(ratiosFromPrices('x', '')).toBe('nan');
  });

  it('mode switching clears the other side', () => {
    const r = row('m', { ratio: '1', completionRatio: '2', cacheRatio: '0.5' });
    expect(setRowMode(r, 'per-request')).toEqual(row('m', { price: '0' }));
    expect(setRowMode(row('m', { price: '0.2' }), 'per-token')).toEqual(row('m'));
    expect(setRowMode(row('m', { price: '0.2' }), 'per-request').price).toBe('0.2');
  });

  it('add model: duplicate → 模型名称已存在', () => {
    const rows = [row('a')];
    expect(addModel(rows, 'a')).toEqual({ error: 'feat.setting.ratio.err.duplicate' });
    expect(addModel(rows, '  ')).toEqual({ error: 'feat.setting.ratio.err.name_required' });
    expect(addModel(rows, 'b')).toEqual([row('b'), row('a')]);
  });

  it('batch set: errors and the applied fields', () => {
    const rows = [row('a', { price: '0.1' }), row('b', { ratio: '1' }), row('c', { ratio: '3' })];
    expect(batchSet(rows, [], 'ratio', '1')).toEqual({ error: 'feat.setting.ratio.err.no_selection' });
    expect(batchSet(rows, ['a'], 'ratio', '')).toEqual({ error: 'feat.setting.ratio.err.fill' });
    expect(batchSet(rows, ['a'], 'ratio', 'abc')).toEqual({ error: 'feat.setting.ratio.err.invalid' });
    expect(batchSet(rows, ['a'], 'both', '1', '')).toEqual({ error: 'feat.setting.ratio.err.both' });
    const r1 = batchSet(rows, ['a', 'b'], 'ratio', '2') as PriceRow[];
    expect(r1[0]).toEqual(row('a', { ratio: '2' }));
    expect(r1[1]).toEqual(row('b', { ratio: '2' }));
    expect(r1[2]).toEqual(rows[2]);
    const r2 = batchSet(rows, ['b'], 'price', '0.5') as PriceRow[];
    expect(r2[1]).toEqual(row('b', { price: '0.5' }));
    const r3 = batchSet(rows, ['c'], 'both', '1', '4') as PriceRow[];
    expect(r3[2]).toEqual(row('c', { ratio: '1', completionRatio: '4' }));
  });

  it('numeric check, search, paging', () => {
    expect(numericError('1.5')).toBeNull();
    expect(numericError('')).toBeNull();
    expect(numericError('x')).toBe('feat.setting.ratio.err.number');
    expect(numericError('-1')).toBe('feat.setting.ratio.err.number');
    expect(filterRows([row('GPT-4o'), row('claude')], 'gpt').map((r) => r.name)).toEqual(['GPT-4o']);
    const list = Array.from({ length: 23 }, (_, i) => i);
    expect(pageOf(list, 3, 10)).toEqual([20, 21, 22]);
    expect(pageOf(list, 1, 10)).toHaveLength(10);
  });

  it('only changed pricing keys are saved (semantic compare)', () => {
    const stored = { ...opts, ModelPrice: '{\n  "dall-e-3": 0.04\n}', ModelRatio: JSON.stringify({ 'gpt-4o': 1.25 }) };
    const rows = rowsFromOptions(stored);
    expect(changedRatioOptions(stored, rows)).toEqual([]);
    const edited = rows.map((r) => (r.name === 'gpt-4o' ? { ...r, ratio: '2' } : r));
    const changes = changedRatioOptions(stored, edited);
    expect(changes.map((c) => c.key)).toEqual(['ModelRatio']);
    expect(JSON.parse(changes[0]!.value)).toEqual({ 'gpt-4o': 2 });
    expect(canonicalJson('{"b":1,"a":2}')).toBe(canonicalJson('{"a":2,"b":1}'));
  });

  it('unset models: enabled models with neither ratio nor price', () => {
    expect(unsetModels(['gpt-4o', 'dall-e-3', 'new-model', 'new-model', 'a-model'], opts)).toEqual(['a-model', 'new-model']);
  });
});
