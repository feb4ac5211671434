import crypto from 'node:crypto';

/**
 * The "epay" (易支付) signature scheme used by PayAddress/EpayId/EpayKey: parameters sorted by
 * name, empty values and `sign`/`sign_type` left out, joined as `k=v&…`, then MD5(joined + key).
 */
export function epaySign(params: Record<string, string>, key: string): string {
  const joined = Object.keys(params)
    .filter((k) => k !== 'sign' && k !== 'sign_type' && params[k] !== undefined && params[k] !== '')
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
  return crypto
    .createHash('md5')
    .update(joined + key, 'utf8')
    .digest('hex');
}

export function epayVerify(params: Record<string, string>, key: string): boolean {
  const given = String(params.sign ?? '').toLowerCase();
  if (!given || !key) return false;
  const expected = epaySign(params, key);
  return given.length === expected.length && crypto.timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

/** The console's payment method names → epay `type`. */
export const EPAY_TYPES: Record<string, string> = { zfb: 'alipay', wx: 'wxpay', alipay: 'alipay', wxpay: 'wxpay' };
