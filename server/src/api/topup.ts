import type Router from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import type { AppContext } from '../context';
import { BadRequestError } from '../lib/errors';
import { parse } from '../lib/validate';
import { randomString } from '../lib/random';
import { nowSec } from '../lib/time';
import { currentUser, requireUser } from '../middleware/auth';
import { EPAY_TYPES, epaySign, epayVerify } from '../services/epay';
import { formatQuota } from '../services/accounts';
import { insertLog, LOG_TYPE } from '../repositories/logs';
import { invalidateUser } from '../services/invalidate';

const payBody = z.object({
  amount: z.coerce.number().int('充值数量必须是整数').min(1, '充值数量不能小于 1').max(10_000_000),
  top_up_code: z.string().max(64).optional().default(''),
  payment_method: z.string().max(16).optional().default('zfb'),
});

/** Money to pay for `amount` units (USD, or quota when not displaying currency) for a user group. */
function priceFor(app: AppContext, amount: number, group: string): number {
  const o = app.options;
  const units = o.bool('DisplayInCurrencyEnabled') ? amount : amount / o.quotaPerUnit;
  const groupRatio = o.json<Record<string, number>>('TopupGroupRatio', {})[group] ?? 1;
  return Math.round(units * o.num('Price', 7.3) * groupRatio * 100) / 100;
}

/** Quota credited for `amount`. */
function quotaFor(app: AppContext, amount: number): number {
  return app.options.bool('DisplayInCurrencyEnabled') ? Math.round(amount * app.options.quotaPerUnit) : amount;
}

function checkAmount(app: AppContext, amount: number) {
  const min = app.options.num('MinTopUp', 1);
  const minUnits = app.options.bool('DisplayInCurrencyEnabled') ? min : min * app.options.quotaPerUnit;
  if (amount < minUnits) throw new BadRequestError(`充值数量不能小于 ${minUnits}`);
}

function onlinePaymentReady(app: AppContext) {
  const o = app.options;
  if (!o.get('PayAddress') || !o.get('EpayId') || !o.get('EpayKey')) throw new BadRequestError('管理员未开启在线充值！');
  if (!o.get('ServerAddress')) throw new BadRequestError('管理员未设置服务器地址');
}

export function register(router: Router, app: AppContext): void {
  router.post('/api/user/amount', requireUser(app), async (ctx) => {
    const user = currentUser(ctx);
    const body = parse(payBody, ctx.request.body ?? {});
    checkAmount(app, body.amount);
    ctx.body = { success: true, message: 'success', data: priceFor(app, body.amount, user.group).toFixed(2) };
  });

  router.post('/api/user/pay', requireUser(app), async (ctx) => {
    const user = currentUser(ctx);
    const body = parse(payBody, ctx.request.body ?? {});
    onlinePaymentReady(app);
    checkAmount(app, body.amount);
    const type = EPAY_TYPES[body.payment_method];
    if (!type) throw new BadRequestError('不支持的支付方式');
    const money = priceFor(app, body.amount, user.group);
    if (money < 0.01) throw new BadRequestError('充值金额过低');
    const o = app.options;
    const tradeNo = `USR${user.id}NO${randomString(12)}`;
    const callbackBase = o.get('CustomCallbackAddress') || o.get('ServerAddress');
    const params: Record<string, string> = {
      pid: o.get('EpayId'),
      type,
      out_trade_no: tradeNo,
      notify_url: `${callbackBase}/api/user/epay/notify`,
      return_url: `${o.get('ServerAddress')}/log`,
      name: `TUC${body.amount}`,
      money: money.toFixed(2),
    };
    params.sign = epaySign(params, o.get('EpayKey'));
    params.sign_type = 'MD5';
    await app.knex('top_ups').insert({
      user_id: user.id,
      amount: body.amount,
      money,
      trade_no: tradeNo,
      payment_method: body.payment_method,
      create_time: nowSec(),
      status: 'pending',
    });
    ctx.body = { success: true, message: 'success', data: params, url: `${o.get('PayAddress')}/submit.php` };
  });

  // The payment provider's asynchronous notification (GET or POST form). Answers plain text.
  const notify = async (ctx: Koa.Context) => {
    const params = { ...(ctx.query as Record<string, string>), ...((ctx.request.body as Record<string, string>) ?? {}) };
    const stringParams = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)]));
    ctx.type = 'text/plain';
    if (!epayVerify(stringParams, app.options.get('EpayKey'))) {
      ctx.body = 'fail';
      return;
    }
    if (stringParams.trade_status !== 'TRADE_SUCCESS') {
      ctx.body = 'success';
      return;
    }
    const tradeNo = stringParams.out_trade_no ?? '';
    await app.knex.transaction(async (trx) => {
      const topup = await trx('top_ups').where({ trade_no: tradeNo }).first();
      if (!topup) return;
      // Conditional update: of concurrent/repeated notifications exactly one credits the user.
      const won = await trx('top_ups').where({ id: topup.id, status: 'pending' }).update({ status: 'success', complete_time: nowSec() });
      if (!won) return;
      const quota = quotaFor(app, Number(topup.amount));
      await trx('users').where({ id: topup.user_id }).increment('quota', quota);
      await insertLog(trx, {
        user_id: topup.user_id,
        type: LOG_TYPE.topup,
        quota,
        content: `在线充值成功，充值金额: ${formatQuota(app, quota)}，支付金额：${Number(topup.money).toFixed(2)}`,
      });
    });
    const topup = await app.knex('top_ups').where({ trade_no: tradeNo }).first('user_id');
    if (topup) await invalidateUser(app, topup.user_id);
    ctx.body = 'success';
  };
  router.get('/api/user/epay/notify', notify);
  router.post('/api/user/epay/notify', notify);

  router.get('/api/user/topup/self', requireUser(app), async (ctx) => {
    const user = currentUser(ctx);
    const items = await app.knex('top_ups').where({ user_id: user.id }).orderBy('id', 'desc').limit(100);
    ctx.body = { success: true, message: '', data: items };
  });
}
