import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { settingMessages } from './messages';
import { RATIO_OPTION_KEYS } from './settingOptions';

function flatten(o: unknown, prefix = ''): string[] {
  if (!o || typeof o !== 'object') return [prefix];
  return Object.entries(o as Record<string, unknown>).flatMap(([k, v]) => flatten(v, prefix ? `${prefix}.${k}` : k));
}

const dir = __dirname;
const source = readdirSync(dir)
  .filter((f) => /\.tsx?$/.test(f) && !f.endsWith('.test.ts'))
  .map((f) => readFileSync(path.join(dir, f), 'utf8'))
  .join('\n');

describe('setting translations', () => {
  const zh = new Set(flatten(settingMessages.zh));
  const en = new Set(flatten(settingMessages.en));

  it('zh and en have the same keys', () => {
    expect([...zh].filter((k) => !en.has(k))).toEqual([]);
    expect([...en].filter((k) => !zh.has(k))).toEqual([]);
  });

  it('every literal key used in the code exists', () => {
    const used = [...source.matchAll(/['"](feat\.setting\.[A-Za-z0-9_.]+)['"]/g)].map((m) => m[1]!);
    expect(used.length).toBeGreaterThan(50);
    expect(used.filter((k) => !zh.has(k))).toEqual([]);
  });

  it('every option field used in the forms has a label', () => {
    const keys = [...source.matchAll(/(?:sw|num|text|secret|json)\('([A-Za-z0-9_.]+)'/g), ...source.matchAll(/key: '([A-Za-z0-9_.]+)'/g)].map((m) => m[1]!);
    const all = [...keys, ...RATIO_OPTION_KEYS, 'GroupRatio', 'UserUsableGroups', 'EmailDomainWhitelist', 'oidc.well_known'];
    expect(all.filter((k) => !zh.has(`feat.setting.f.${k.replace(/\./g, '_')}`))).toEqual([]);
  });

  it('uses the product wording', () => {
    const z = settingMessages.zh as { feat: { setting: Record<string, Record<string, unknown>> } };
    const s = z.feat.setting;
    expect(s.msg.nothing).toBe('你似乎并没有修改什么');
    expect(s.msg.saved).toBe('保存成功');
    expect(s.err.json).toBe('不是合法的 JSON 字符串');
    expect(s.ratio.err).toMatchObject({
      number: '请输入数字',
      duplicate: '模型名称已存在',
      no_selection: '请先选择需要批量设置的模型',
      fill: '请输入填充值',
      invalid: '请输入有效的数字',
      both: '请输入模型倍率和补全倍率',
    });
    const e = (settingMessages.en as { feat: { setting: Record<string, Record<string, unknown>> } }).feat.setting;
    expect(e.msg.nothing).toBe("You don't seem to have changed anything");
    expect(e.log.need_time).toBe('Please select log record time');
    expect(e.other.update_fail).toBe('Failed to check for updates, please try again later');
    expect(e.sys.oidc_fail).toBe('Failed to get OIDC configuration, please check network and Well-Known URL');
  });
});
