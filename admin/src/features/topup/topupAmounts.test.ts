import { describe, expect, it } from 'vitest';
import {
  minTopup,
  normaliseAmount,
  orderStatusTone,
  payFields,
  payProblem,
  redeemProblem,
  safePayUrl,
  submitPayForm,
  topupLink,
  yuanText,
} from './topupAmounts';
import { topupMessages } from './messages';

describe('wallet checks', () => {
  it('requires a redemption code', () => {
    expect(redeemProblem('')).toEqual({ key: 'feat.topup.code_empty' });
    expect(redeemProblem('   ')).toEqual({ key: 'feat.topup.code_empty' });
    expect(redeemProblem('abc')).toBeNull();
  });

  it('forces the amount to an integer of at least 1', () => {
    expect(normaliseAmount('0')).toBe(1);
    expect(normaliseAmount('-5')).toBe(1);
    expect(normaliseAmount('')).toBe(1);
    expect(normaliseAmount('abc')).toBe(1);
    expect(normaliseAmount('7.9')).toBe(7);
    expect(normaliseAmount(12)).toBe(12);
  });

  it('takes the minimum from status min_topup (dollars, or quota units without currency display)', () => {
    expect(minTopup({})).toBe(1);
    expect(minTopup({ min_topup: 5 })).toBe(5);
    expect(minTopup({ min_topup: 0 })).toBe(1);
    expect(minTopup({ min_topup: 2, display_in_currency: false, quota_per_unit: 1000 })).toBe(2000);
    expect(minTopup({ min_topup: 2, display_in_currency: 'true', quota_per_unit: 1000 })).toBe(2);
  });

  it('refuses online top-up when disabled, then below the minimum', () => {
    expect(payProblem({ enable_online_topup: false, min_topup: 1 }, 100)).toEqual({ key: 'feat.topup.online_disabled' });
    expect(payProblem({ min_topup: 1 }, 100)).toEqual({ key: 'feat.topup.online_disabled' });
    expect(payProblem({ enable_online_topup: true, min_topup: 10 }, 9)).toEqual({ key: 'feat.topup.below_min', values: { n: 10 } });
    expect(payProblem({ enable_online_topup: true, min_topup: 10 }, 10)).toBeNull();
  });

  it('needs a top-up link', () => {
    expect(topupLink({})).toEqual({ key: 'feat.topup.no_link' });
    expect(topupLink({ top_up_link: '  ' })).toEqual({ key: 'feat.topup.no_link' });
    expect(topupLink({ top_up_link: 'https://shop.example/buy' })).toEqual({ url: 'https://shop.example/buy' });
  });

  it('uses the product wording in Chinese', () => {
    const zh = topupMessages.zh.feat.topup;
    expect(zh.code_empty).toBe('请输入兑换码！');
    expect(zh.redeem_ok).toBe('兑换成功！');
    expect(zh.online_disabled).toBe('管理员未开启在线充值！');
    expect(zh.no_link).toBe('超级管理员未设置充值链接！');
    expect(zh.below_min).toBe('充值数量不能小于 {{n}}');
  });

  it('has the same keys in both languages', () => {
    const keys = (o: unknown, p = ''): string[] =>
      o && typeof o === 'object' ? Object.entries(o as Record<string, unknown>).flatMap(([k, v]) => keys(v, `${p}${k}.`)) : [p];
    expect(keys(topupMessages.en).sort()).toEqual(keys(topupMessages.zh).sort());
  });
});

describe('payment form', () => {
  it('shows prices in yuan with two decimals', () => {
    expect(yuanText('7.30')).toBe('7.30');
    expect(yuanText(14.6)).toBe('14.60');
    expect(yuanText('x')).toBe('0.00');
  });

  it('accepts only http(s) payment urls', () => {
    expect(safePayUrl('https://pay.example/submit.php')).toBe('https://pay.example/submit.php');
    expect(safePayUrl('javascript:alert(1)')).toBeNull();
    expect(safePayUrl('')).toBeNull();
    expect(safePayUrl(undefined)).toBeNull();
  });

  it('turns the answer data into text fields', () => {
    expect(payFields({ pid: '1', money: 7.3, nested: { a: 1 }, empty: null })).toEqual([
      ['pid', '1'],
      ['money', '7.3'],
    ]);
    expect(payFields(null)).toEqual([]);
    expect(payFields(['a'])).toEqual([]);
  });

  it('submits a hidden POST form to the url in a new tab and removes it', () => {
    interface FakeEl {
      tag: string;
      children: FakeEl[];
      style: Record<string, string>;
      submitted?: boolean;
      [k: string]: unknown;
    }
    const body: FakeEl[] = [];
    const events: string[] = [];
    const doc = {
      createElement: (tag: string) => {
        const el: FakeEl = {
          tag,
          children: [],
          style: {},
          appendChild(c: FakeEl) {
            el.children.push(c);
          },
          submit() {
            el.submitted = true;
            events.push(`submit:${body.includes(el)}`);
          },
        };
        return el;
      },
      body: {
        appendChild: (el: FakeEl) => void body.push(el),
        removeChild: (el: FakeEl) => void body.splice(body.indexOf(el), 1),
      },
    } as unknown as Document;
    const form = submitPayForm(
      'https://pay.example/submit.php',
      [
        ['pid', '1'],
        ['sign', 'abc'],
      ],
      doc,
    ) as unknown as FakeEl;
    expect(form.method).toBe('POST');
    expect(form.action).toBe('https://pay.example/submit.php');
    expect(form.target).toBe('_blank');
    expect(form.children.map((c) => [c.type, c.name, c.value])).toEqual([
      ['hidden', 'pid', '1'],
      ['hidden', 'sign', 'abc'],
    ]);
    expect(events).toEqual(['submit:true']);
    expect(body).toHaveLength(0);
  });

  it('colours order statuses', () => {
    expect(orderStatusTone('success')).toBe('green');
    expect(orderStatusTone('pending')).toBe('orange');
    expect(orderStatusTone('failed')).toBe('red');
    expect(orderStatusTone('other')).toBe('grey');
  });
});

describe('translation keys used by the topup screens', () => {
  it('exist in zh and en', async () => {
    const fs = await import('node:fs');
    const path = await import('node:path');
    const dir = path.dirname(new URL(import.meta.url).pathname);
    const { topupMessages: msgs } = await import('./messages');
    const lookup = (tree: unknown, key: string) =>
      key.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), tree);
    const used = new Set<string>();
    for (const file of fs.readdirSync(dir).filter((n: string) => n.endsWith('.tsx') || (n.endsWith('.ts') && !n.endsWith('.test.ts')))) {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      for (const m of text.matchAll(/'(feat\.topup\.[a-z_.]+[a-z_])'/g)) used.add(m[1]);
    }
    expect(used.size).toBeGreaterThan(10);
    for (const key of used) {
      expect(typeof lookup(msgs.zh, key), `zh ${key}`).toBe('string');
      expect(typeof lookup(msgs.en, key), `en ${key}`).toBe('string');
    }
  });
});
