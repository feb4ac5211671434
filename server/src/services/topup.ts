import type { AppContext } from '../context';
import { msg, serverLang, t } from '../i18n';
import { BadRequestError } from '../lib/errors';
import { randomString } from '../lib/random';
import { own } from '../lib/own';
import { completeTopUp, findTopUpUser, insertPendingTopUp, listTopUps, recentTopUps, type TopUpRow } from '../repositories/topups';
import { redeemedBy } from '../repositories/redemptions';
import type { UserRow } from '../repositories/users';
import { formatQuota } from './accounts';
import { EPAY_TYPES, epaySign, epayVerify } from './epay';
import { invalidateUser } from './invalidate';

/** Money to pay for `amount` units (USD, or quota when not displaying currency) for a user group. */
function priceFor(app: AppContext, amount: number, group: string): number {
  const o = app.options;
  const units = o.bool('DisplayInCurrencyEnabled') ? amount : amount / o.quotaPerUnit;
  const r = own(o.json<Record<string, number>>('TopupGroupRatio', {}), group);
  const groupRatio = typeof r === 'number' && Number.isFinite(r) ? r : 1;
  return Math.round(units * o.num('Price', 7.3) * groupRatio * 100) / 100;
}

/** Quota credited for `amount`. */
function quotaFor(app: AppContext, amount: number): number {
  return app.options.bool('DisplayInCurrencyEnabled') ? Math.round(amount * app.options.quotaPerUnit) : amount;
}

function checkAmount(app: AppContext, amount: number) {
  const min = app.options.num('MinTopUp', 1);
  const minUnits = app.options.bool('DisplayInCurrencyEnabled') ? min : min * app.options.quotaPerUnit;
  if (amount < minUnits) throw new BadRequestError(msg('topup.below_minimum', { min: minUnits }));
}

function onlinePaymentReady(app: AppContext) {
  const o = app.options;
  if (!o.get('PayAddress') || !o.get('EpayId') || !o.get('EpayKey')) throw new BadRequestError('topup.disabled');
  if (!o.get('ServerAddress')) throw new BadRequestError('topup.no_server_address');
}

export interface PayInput {
  amount: number;
  payment_method: string;
}

/** The price of `amount` for the user, as text with two decimals. */
export function quotePrice(app: AppContext, user: UserRow, amount: number): string {
  checkAmount(app, amount);
  return priceFor(app, amount, user.group).toFixed(2);
}

/** Records a pending order and answers the signed form the browser posts to the payment provider. */
export async function startPayment(app: AppContext, user: UserRow, input: PayInput): Promise<{ params: Record<string, string>; url: string }> {
  onlinePaymentReady(app);
  checkAmount(app, input.amount);
  const type = own(EPAY_TYPES, input.payment_method);
  if (!type) throw new BadRequestError('topup.bad_method');
  const money = priceFor(app, input.amount, user.group);
  if (money < 0.01) throw new BadRequestError('topup.too_low');
  const o = app.options;
  const tradeNo = `USR${user.id}NO${randomString(12)}`;
  const callbackBase = o.get('CustomCallbackAddress') || o.get('ServerAddress');
  const params: Record<string, string> = {
    pid: o.get('EpayId'),
    type,
    out_trade_no: tradeNo,
    notify_url: `${callbackBase}/api/user/epay/notify`,
    return_url: `${o.get('ServerAddress')}/log`,
    name: `TUC${input.amount}`,
    money: money.toFixed(2),
  };
  params.sign = epaySign(params, o.get('EpayKey'));
  params.sign_type = 'MD5';
  await insertPendingTopUp(app.knex, { user_id: user.id, amount: input.amount, money, trade_no: tradeNo, payment_method: input.payment_method });
  return { params, url: `${o.get('PayAddress')}/submit.php` };
}

/**
 * The payment provider's notification: answers the plain-text word it expects ('fail' for a bad
 * signature, otherwise 'success'); a paid order credits its user once.
 */
export async function paymentNotified(app: AppContext, params: Record<string, string>): Promise<'success' | 'fail'> {
  if (!epayVerify(params, app.options.get('EpayKey'))) return 'fail';
  if (params.trade_status !== 'TRADE_SUCCESS') return 'success';
  const tradeNo = params.out_trade_no ?? '';
  await completeTopUp(app.knex, tradeNo, (order) => {
    const quota = quotaFor(app, Number(order.amount));
    return { quota, content: t(serverLang(app), 'log.topup', { amount: formatQuota(app, quota), money: Number(order.money).toFixed(2) }) };
  });
  const userId = await findTopUpUser(app.knex, tradeNo);
  if (userId !== undefined) await invalidateUser(app, userId);
  return 'success';
}

export interface TopUpHistoryRow {
  /** 'order' (online payment) or 'redemption' (a redeemed code). */
  kind: 'order' | 'redemption';
  id: number;
  /** Units the user typed (orders), or the code's quota in display units (redemptions). */
  amount: number;
  /** Quota credited (redemptions; orders: the quota the amount buys). */
  quota: number;
  money: number;
  trade_no: string;
  payment_method: string;
  create_time: number;
  status: string;
}

/**
 * The wallet's history: the user's online orders and the codes they redeemed, newest first, at most
 * 100. Redemptions carry the code's name (not its key) as trade_no and `redemption` as method.
 */
export async function topUpHistory(app: AppContext, userId: number): Promise<TopUpHistoryRow[]> {
  const [orders, codes] = await Promise.all([recentTopUps(app.knex, userId), redeemedBy(app.knex, userId)]);
  const qpu = app.options.quotaPerUnit;
  const inCurrency = app.options.bool('DisplayInCurrencyEnabled');
  const rows: TopUpHistoryRow[] = [
    ...orders.map((o) => ({
      kind: 'order' as const,
      id: Number(o.id),
      amount: Number(o.amount),
      quota: quotaFor(app, Number(o.amount)),
      money: Number(o.money),
      trade_no: o.trade_no,
      payment_method: o.payment_method,
      create_time: Number(o.create_time),
      status: o.status,
    })),
    ...codes.map((c) => ({
      kind: 'redemption' as const,
      id: Number(c.id),
      amount: inCurrency ? Math.round((Number(c.quota) / qpu) * 1e6) / 1e6 : Number(c.quota),
      quota: Number(c.quota),
      money: 0,
      trade_no: c.name,
      payment_method: 'redemption',
      create_time: Number(c.redeemed_time),
      status: 'success',
    })),
  ];
  return rows.sort((a, b) => b.create_time - a.create_time || b.id - a.id).slice(0, 100);
}

export type TopUpOrderRow = TopUpRow & { username: string; quota: number };

/**
 * All users' orders for admins (paged, filtered), each with its user's name and the quota its
 * amount buys (what a paid order credits), so the console shows it in the display currency.
 */
export async function listTopUpOrders(
  app: AppContext,
  filter: Parameters<typeof listTopUps>[1],
  paging: Parameters<typeof listTopUps>[2],
): Promise<{ items: TopUpOrderRow[]; total: number }> {
  const { items, total } = await listTopUps(app.knex, filter, paging);
  return {
    total,
    items: items.map((o) => ({
      ...o,
      id: Number(o.id),
      user_id: Number(o.user_id),
      amount: Number(o.amount),
      money: Number(o.money),
      create_time: Number(o.create_time),
      complete_time: o.complete_time == null ? 0 : Number(o.complete_time),
      quota: quotaFor(app, Number(o.amount)),
    })),
  };
}
