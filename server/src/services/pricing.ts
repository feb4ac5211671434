import type { AppContext } from '../context';
import { parseUserSetting, type UserRow } from '../repositories/users';
import { UNSET_MODEL_RATIO } from './billing';
import { serverLang, t, type Lang } from '../i18n';
import { emptyMap, hasOwn } from '../lib/own';

/**
 * Groups a user may pick (UserUsableGroups), plus the user's own group when the map lacks it
 * (as new-api does: a user can always use the group the admin put them in).
 */
export function usableGroups(app: AppContext, userGroup?: string, lang: Lang = serverLang(app)): Record<string, string> {
  const raw = app.options.json<Record<string, unknown>>('UserUsableGroups', {});
  // Without a prototype: a group is a group whatever its name (`constructor` is not already "in" it).
  const out = emptyMap<string>();
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) for (const [k, v] of Object.entries(raw)) out[k] = String(v ?? '');
  if (userGroup && !hasOwn(out, userGroup)) out[userGroup] = t(lang, 'user.group_desc');
  return out;
}

export interface PricingEntry {
  model_name: string;
  /** 0 pay per usage (ratios), 1 pay per call (ModelPrice). */
  quota_type: 0 | 1;
  model_ratio: number;
  completion_ratio: number;
  model_price: number;
  enable_groups: string[];
  /**
   * A price (ModelPrice) or ratio (ModelRatio) is configured. Without one the relay refuses the
   * model (unless self-use mode or the user's accept-unset setting), so the console shows it as
   * not available instead of free.
   */
  priced: boolean;
  /**
   * The viewer's calls are billed: the model is priced, or it is not and the viewer accepts unset
   * models (their accept_unset_model_ratio_model setting, or SelfUseModeEnabled). An unpriced
   * model the viewer may call carries, as model_ratio, the default ratio the relay bills it at.
   */
  callable: boolean;
}

const numMap = (app: AppContext, key: string): Record<string, number> => {
  const v = app.options.json<Record<string, unknown>>(key, {});
  const out = emptyMap<number>();
  if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k, n] of Object.entries(v)) if (typeof n === 'number' && Number.isFinite(n)) out[k] = n;
  return out;
};

/**
 * Whether unpriced models are billed (at UNSET_MODEL_RATIO) rather than refused for this viewer,
 * by the same rule as the relay (services/billing.ts priceFor): self-use mode, or the user's own
 * accept-unset setting. Visitors only get self-use mode.
 */
export function acceptsUnset(app: AppContext, user?: Pick<UserRow, 'setting'>): boolean {
  if (app.options.bool('SelfUseModeEnabled')) return true;
  return parseUserSetting(user?.setting).accept_unset_model_ratio_model === true;
}

/**
 * One entry per model that some enabled ability serves; enable_groups = the groups that serve it.
 * `acceptUnset`: the viewer's unpriced models are callable, billed at the default ratio.
 */
export async function pricingEntries(app: AppContext, acceptUnset = false): Promise<PricingEntry[]> {
  const rows: Array<{ model: string; group: string }> = await app.knex('abilities').distinct('model', 'group').where({ enabled: true });
  const groups = new Map<string, Set<string>>();
  for (const r of rows) {
    const set = groups.get(r.model) ?? new Set<string>();
    set.add(r.group);
    groups.set(r.model, set);
  }
  const ratio = numMap(app, 'ModelRatio');
  const completion = numMap(app, 'CompletionRatio');
  const price = numMap(app, 'ModelPrice');
  return [...groups.keys()].sort().map((model) => {
    const perCall = Object.prototype.hasOwnProperty.call(price, model);
    const hasRatio = Object.prototype.hasOwnProperty.call(ratio, model);
    const priced = perCall || hasRatio;
    const billedAtDefault = !priced && acceptUnset;
    return {
      model_name: model,
      quota_type: perCall ? 1 : 0,
      model_ratio: billedAtDefault ? UNSET_MODEL_RATIO : (ratio[model] ?? 0),
      completion_ratio: completion[model] ?? 1,
      model_price: perCall ? price[model]! : 0,
      enable_groups: [...groups.get(model)!].sort(),
      priced,
      callable: priced || acceptUnset,
    };
  });
}

/**
 * The public pricing answer. With a logged-in user the usable groups are theirs (own group
 * included), group_ratio lists only the groups they may use, and unpriced models are callable
 * when they accept unset models (see `acceptsUnset`).
 */
export async function pricing(app: AppContext, user?: Pick<UserRow, 'group' | 'setting'>, lang?: Lang) {
  const usable = usableGroups(app, user?.group, lang);
  const allRatios = numMap(app, 'GroupRatio');
  const groupRatio = emptyMap<number>();
  for (const [g, r] of Object.entries(allRatios)) if (hasOwn(usable, g)) groupRatio[g] = r;
  return { data: await pricingEntries(app, acceptsUnset(app, user)), group_ratio: groupRatio, usable_group: usable };
}
