import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { resourceMessages } from './messages';

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && name !== 'messages.ts') out.push(p);
  }
  return out;
}

function lookup(tree: unknown, key: string): unknown {
  return key.split('.').reduce<unknown>((node, part) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined), tree);
}

function leaves(tree: unknown, prefix = ''): string[] {
  if (typeof tree === 'string') return [prefix];
  return Object.entries(tree as Record<string, unknown>).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k));
}

const dir = __dirname;
const staticKeys = new Set<string>();
for (const f of files(dir)) {
  const text = readFileSync(f, 'utf8');
  for (const m of text.matchAll(/['"`](res\.[a-z0-9_.]+[a-z0-9_])['"`]/g)) staticKeys.add(m[1]);
}

/** Keys built at run time from a prefix and a known set of suffixes. */
const dynamicKeys = [
  ...['id', 'name', 'group', 'type', 'status', 'response_time', 'balance', 'priority', 'weight'].map((k) => `res.channel.fields.${k}`),
  ...['all', 'topup', 'consume', 'manage', 'system', 'unknown'].map((k) => `res.log.type.${k}`),
  ...['unused', 'disabled', 'used', 'unknown'].map((k) => `res.redemption.status.${k}`),
  ...['never', 'hour', 'day', 'month'].map((k) => `res.token.expiry.${k}`),
  ...['enabled', 'enabled_limited', 'disabled', 'expired', 'exhausted', 'unknown'].map((k) => `res.token.status.${k}`),
  ...['promote', 'demote', 'delete'].map((k) => `res.user.confirm.${k}`),
  ...['email', 'github_id', 'oidc_id', 'wechat_id', 'telegram_id', 'linux_do_id'].map((k) => `res.user.fields.${k}`),
  ...['user', 'admin', 'root', 'unknown'].map((k) => `res.user.role.${k}`),
  ...['activated', 'banned', 'status3', 'unknown', 'deregistered'].map((k) => `res.user.status.${k}`),
  ...['channel', 'token', 'redemption', 'user', 'log'].map((k) => `resources.${k}.name`),
];

describe('resource messages', () => {
  it('finds the keys used by the screens', () => {
    expect(staticKeys.size).toBeGreaterThan(200);
  });
  for (const lang of ['zh', 'en'] as const) {
    it(`${lang} has a text for every key used`, () => {
      const missing = [...staticKeys, ...dynamicKeys].filter((k) => typeof lookup(resourceMessages[lang], k) !== 'string');
      expect(missing).toEqual([]);
    });
  }
  it('zh and en have the same keys', () => {
    expect(leaves(resourceMessages.en).sort()).toEqual(leaves(resourceMessages.zh).sort());
  });
  it('uses the product wording for validations and results', () => {
    const zh = resourceMessages.zh;
    expect(lookup(zh, 'res.channel.msg.name_key_required')).toBe('请填写渠道名称和渠道密钥！');
    expect(lookup(zh, 'res.channel.msg.models_required')).toBe('请至少选择一个模型！');
    expect(lookup(zh, 'res.channel.msg.mapping_json')).toBe('模型映射必须是合法的 JSON 格式！');
    expect(lookup(zh, 'res.channel.msg.select_for_tag')).toBe('请先选择要设置标签的渠道！');
    expect(lookup(zh, 'res.channel.msg.tag_required')).toBe('标签不能为空！');
    expect(lookup(zh, 'res.channel.msg.nothing_changed')).toBe('没有任何修改！');
    expect(lookup(zh, 'res.channel.msg.models_exist')).toBe('某些模型已存在！');
    expect(lookup(zh, 'res.channel.msg.key_needed')).toBe('请填写密钥');
    expect(lookup(zh, 'res.channel.msg.created')).toBe('渠道创建成功！');
    expect(lookup(zh, 'res.channel.msg.updated')).toBe('渠道更新成功！');
    expect(lookup(zh, 'res.channel.msg.copied')).toBe('渠道复制成功');
    expect(lookup(zh, 'res.token.msg.expiry_invalid')).toBe('过期时间格式错误！');
    expect(lookup(zh, 'res.token.msg.created')).toBe('令牌创建成功，请在列表页面点击复制获取令牌！');
    expect(lookup(zh, 'res.token.msg.updated')).toBe('令牌更新成功！');
    expect(lookup(zh, 'res.common.copy_failed')).toBe('无法复制到剪贴板，请手动复制');
    expect(lookup(zh, 'res.redemption.msg.updated')).toBe('兑换码更新成功！');
    expect(lookup(zh, 'res.redemption.msg.created')).toBe('创建成功');
    expect(lookup(resourceMessages.en, 'res.user.msg.username_password_required')).toBe('Username and password cannot be empty!');
  });
});
