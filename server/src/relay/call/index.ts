import type { AppContext } from '../../context';
import { loadedRouteTable, routeTable } from '../../channels/routeTable';
import { checkModelRateLimit } from '../../services/modelRateLimit';
import { recordRelay } from '../../metrics';
import type { RelayCall } from './relayCall';
import { ignore } from './relayCall';
import { planCall } from './plan';
import { CallMoney } from './money';
import { attemptChannels } from './attempt';
import { recordUsage, settleCall } from './settle';
import { RelayOutcome } from './outcome';
import { recordFailure } from '../errorLog';

export type { RelayCall } from './relayCall';

/**
 * Relays one client call: plan it (checks, price, candidate channels), reserve its quota, attempt
 * channels until one answers (relaying a stream as it comes), settle the quota to the real cost,
 * then end the client's answer and write the usage. The outcome feeds the metrics.
 */
export async function relay(call: RelayCall): Promise<void> {
  const { app } = call;
  const live = liveCalls(app);
  live.n++;
  const outcome = new RelayOutcome(call.model);
  try {
    const plan = planCall(call, loadedRouteTable(app) ?? (await routeTable(app)));
    // Checked only when enabled: most installations never turn it on, and this runs per call.
    const ticket = app.options.bool('ModelRequestRateLimitEnabled') ? await checkModelRateLimit(app, call.principal.user.id) : undefined;
    const money = new CallMoney(app, call, plan);
    const opening = money.begin();
    if (opening) money.opened(await opening);

    const answer = await attemptChannels(call, plan, money, outcome);
    outcome.answered(answer);
    // The balance is settled before the answer is (ended) — it is exact when the client has it;
    // the rest of the bookkeeping (usage counters, the log row, the quota warning) comes after.
    const settled = await settleCall(call, plan, money, answer, outcome);
    if (ticket) void ticket.success().catch(ignore);
    try {
      answer.finish();
    } finally {
      // Billed, so logged: the upstream served the call even if ending the client's answer failed.
      outcome.status = call.ctx.res.headersSent ? call.ctx.res.statusCode : call.ctx.status;
      recordUsage(call, plan, money, answer, outcome, settled);
    }
  } catch (err) {
    outcome.failed(err);
    recordFailure(call, outcome);
    throw err;
  } finally {
    if (--live.n === 0 && live.idle) live.idle();
    outcome.timed(call.timer);
    recordRelay(app, outcome);
  }
}

/** Relay calls in progress (a shutdown waits for them to settle or refund before closing the database). */
interface LiveCalls {
  n: number;
  idle: (() => void) | undefined;
}

function liveCalls(app: AppContext): LiveCalls {
  return app.memo('relay:live', (): LiveCalls => ({ n: 0, idle: undefined }));
}

/** Resolves true once no relay call is in progress, false if some still are after `timeoutMs`. */
export function relayCallsDone(app: AppContext, timeoutMs: number): Promise<boolean> {
  const live = liveCalls(app);
  if (!live.n) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      live.idle = undefined;
      resolve(false);
    }, timeoutMs);
    live.idle = () => {
      clearTimeout(t);
      live.idle = undefined;
      resolve(true);
    };
  });
}
