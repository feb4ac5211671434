import { describe, expect, it } from 'vitest';
import { translations, type Locale } from './index';

/** Each page's title is what its menu entry says, in both languages. */
const PAIRS: Array<[string, string]> = [
  ['app.menu.token', 'res.token.title'],
  ['app.menu.log', 'res.log.title'],
  ['app.menu.channel', 'res.channel.title'],
  ['app.menu.redemption', 'res.redemption.title'],
  ['app.menu.topup_order', 'res.topup_order.title'],
  ['app.menu.user', 'res.user.title'],
  ['app.menu.detail', 'feat.detail.title'],
  ['app.menu.performance', 'feat.performance.title'],
  ['app.menu.topup', 'feat.topup.title'],
  ['app.menu.personal', 'feat.personal.title'],
  ['app.menu.playground', 'feat.playground.title'],
  ['app.nav.pricing', 'feat.pricing.title'],
];

const at = (tree: Record<string, unknown>, path: string): unknown =>
  path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], tree);

describe('page titles match the menu', () => {
  for (const locale of ['zh', 'en'] as Locale[])
    it.each(PAIRS)(`${locale}: %s = %s`, (menu, title) => {
      const t = translations(locale);
      expect(at(t, title)).toBe(at(t, menu));
    });
});
