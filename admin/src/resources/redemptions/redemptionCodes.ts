/** Redemption code screen logic (unit-tested). */
import { formatQuota, type DisplaySettings } from '../shared/format';

export const REDEMPTION_STATUS = { UNUSED: 1, DISABLED: 2, USED: 3 } as const;
export const DEFAULT_REDEMPTION_QUOTA = 100000;
export const MAX_REDEMPTION_COUNT = 100;
/** Amount presets in dollars (the first is the new code's default). */
export const REDEMPTION_USD_PRESETS = [10, 1, 5, 20, 50, 100];

/** Quota units → the dollar field's text ('' for a non-number), without float noise. */
export function amountText(quota: number, quotaPerUnit: number): string {
  if (!Number.isFinite(quota) || !(quotaPerUnit > 0)) return '';
  return String(Number((quota / quotaPerUnit).toPrecision(12)));
}

export interface RedemptionForm {
  id?: number;
  name: string;
  quota: number | string;
  count: number | string;
}

/** The form as react-admin's inputs hold it (an emptied input holds null, read as empty text). */
export function asRedemptionForm(values: Record<string, unknown>): RedemptionForm {
  const v = (k: string) => (values[k] === null || values[k] === undefined ? '' : (values[k] as number | string));
  return {
    ...(values.id !== undefined && values.id !== null ? { id: Number(values.id) } : {}),
    name: String(v('name')),
    quota: v('quota'),
    count: v('count'),
  };
}

/** The per-field checks (each the i18n key of its problem, or null): the inputs' validators, and validateRedemption in order. */
export const redemptionChecks = {
  /** 1–20 characters once trimmed (empty takes the amount as its name). */
  name: (form: RedemptionForm): string | null => (form.name.trim().length > 20 ? 'res.redemption.msg.name_length' : null),
  quota: (form: RedemptionForm): string | null => (/^\d+$/.test(String(form.quota).trim()) ? null : 'res.redemption.msg.quota_integer'),
  /** 1..100 codes per create. */
  count: (form: RedemptionForm, isEdit: boolean): string | null => {
    if (isEdit) return null;
    const c = String(form.count).trim();
    return /^\d+$/.test(c) && Number(c) >= 1 && Number(c) <= MAX_REDEMPTION_COUNT ? null : 'res.redemption.msg.count_range';
  },
};

/** Returns the i18n key of the first problem or null. Name 1–20 characters (after the default), count 1..100. */
export function validateRedemption(form: RedemptionForm, isEdit: boolean): string | null {
  return redemptionChecks.name(form) ?? redemptionChecks.quota(form) ?? redemptionChecks.count(form, isEdit);
}

/** Wire body; an empty name defaults to the formatted quota. */
export function redemptionPayload(form: RedemptionForm, isEdit: boolean, settings: DisplaySettings): Record<string, unknown> {
  const quota = parseInt(String(form.quota), 10) || 0;
  const name = form.name.trim() || formatQuota(quota, settings);
  return isEdit ? { id: form.id, name, quota } : { name, quota, count: parseInt(String(form.count), 10) || 1 };
}

/** Text of the downloaded file: one code per line. */
export function codesFileText(codes: readonly string[]): string {
  return codes.join('\n') + (codes.length ? '\n' : '');
}

export function redemptionStatusKey(status: number): string {
  return status === 1 ? 'unused' : status === 2 ? 'disabled' : status === 3 ? 'used' : 'unknown';
}
