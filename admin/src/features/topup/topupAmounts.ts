/**
 * Wallet page amounts and checks: redeem and top-up checks, the minimum amount, the payment form.
 * Pure functions (no React), unit-tested in topupAmounts.test.ts.
 */

export type PaymentMethod = 'zfb' | 'wx';

export interface TopupStatus {
  min_topup?: unknown;
  enable_online_topup?: unknown;
  top_up_link?: unknown;
  display_in_currency?: unknown;
  quota_per_unit?: unknown;
  price?: unknown;
}

/** A check's outcome: a translation key with its values, or null when fine. */
export interface Problem {
  key: string;
  values?: Record<string, unknown>;
}

const truthy = (v: unknown) => v === true || v === 'true' || v === 1 || v === '1';

/**
 * The smallest amount the user may type: status min_topup (1 by default). The amount is in dollars when
 * the site displays currency; otherwise it is in quota units, so the minimum is min_topup × quota_per_unit
 * (the server checks the same rule).
 */
export function minTopup(status: TopupStatus): number {
  const raw = Number(status.min_topup);
  const min = Number.isFinite(raw) && raw > 0 ? raw : 1;
  const displayInCurrency = status.display_in_currency === undefined ? true : truthy(status.display_in_currency);
  if (displayInCurrency) return min;
  const qpu = Number(status.quota_per_unit);
  return min * (Number.isFinite(qpu) && qpu > 0 ? qpu : 500000);
}

/** The amount field: forced to an integer of at least 1. */
export function normaliseAmount(input: string | number): number {
  const n = Math.floor(Number(input));
  if (!Number.isFinite(n) || n < 1) return 1;
  return n;
}

/** Redeem: the code is required. */
export function redeemProblem(code: string): Problem | null {
  return code.trim() ? null : { key: 'feat.topup.code_empty' };
}

/** Online top-up checks, in the product's order: enabled, then the minimum. */
export function payProblem(status: TopupStatus, amount: number): Problem | null {
  if (!truthy(status.enable_online_topup)) return { key: 'feat.topup.online_disabled' };
  const min = minTopup(status);
  if (!Number.isFinite(amount) || amount < min) return { key: 'feat.topup.below_min', values: { n: min } };
  return null;
}

/** The top-up link, or a problem when the super admin set none. */
export function topupLink(status: TopupStatus): { url: string } | Problem {
  const url = typeof status.top_up_link === 'string' ? status.top_up_link.trim() : '';
  return url ? { url } : { key: 'feat.topup.no_link' };
}

/** The price the server answered (a 2-decimal string or a number) as yuan text. */
export function yuanText(price: unknown): string {
  const n = Number(price);
  return Number.isFinite(n) ? n.toFixed(2) : '0.00';
}

/** Only http(s) payment pages are submitted to (a `javascript:` url from a bad answer is refused). */
export function safePayUrl(url: unknown): string | null {
  if (typeof url !== 'string' || !url) return null;
  try {
    const u = new URL(url, typeof window !== 'undefined' ? window.location.href : 'http://localhost/');
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : null;
  } catch {
    return null;
  }
}

/** Form fields from the /api/user/pay answer: every value as text, objects dropped. */
export function payFields(data: unknown): Array<[string, string]> {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return [];
  const out: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
    if (v === null || v === undefined || typeof v === 'object') continue;
    out.push([k, String(v)]);
  }
  return out;
}

/**
 * Builds the hidden form that POSTs the payment fields to `url` in a new tab, submits it and removes it.
 * `doc` is injectable for tests.
 */
export function submitPayForm(url: string, fields: Array<[string, string]>, doc: Document = document): HTMLFormElement {
  const form = doc.createElement('form');
  form.method = 'POST';
  form.action = url;
  form.target = '_blank';
  form.style.display = 'none';
  for (const [name, value] of fields) {
    const input = doc.createElement('input');
    input.type = 'hidden';
    input.name = name;
    input.value = value;
    form.appendChild(input);
  }
  doc.body.appendChild(form);
  form.submit();
  doc.body.removeChild(form);
  return form;
}

/** Colour of a top-up order status. */
export function orderStatusTone(status: string): 'green' | 'orange' | 'red' | 'grey' {
  if (status === 'success') return 'green';
  if (status === 'pending') return 'orange';
  if (status === 'failed' || status === 'expired') return 'red';
  return 'grey';
}
