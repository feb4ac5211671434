/**
 * The answer of "update all balances" (`GET /api/channel/update_balance`): per enabled channel,
 * whether its balance was updated, failed (and why) or its kind has no balance endpoint. Read
 * defensively: a malformed answer gives an empty summary, never a throw.
 */
export interface BalanceResultRow {
  id: number;
  name: string;
  type: number;
  status: 'updated' | 'failed' | 'unsupported';
  balance?: number;
  message?: string;
}

export interface BalanceSummary {
  total: number;
  updated: number;
  failed: number;
  unsupported: number;
  results: BalanceResultRow[];
}

const STATUSES = new Set(['updated', 'failed', 'unsupported']);

export function balanceSummaryFrom(data: unknown): BalanceSummary {
  const d = data && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
  const results: BalanceResultRow[] = [];
  for (const raw of Array.isArray(d.results) ? d.results : []) {
    const r = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : undefined;
    if (!r || typeof r.id !== 'number' || !STATUSES.has(String(r.status))) continue;
    results.push({
      id: r.id,
      name: typeof r.name === 'string' ? r.name : '',
      type: typeof r.type === 'number' ? r.type : 0,
      status: r.status as BalanceResultRow['status'],
      balance: typeof r.balance === 'number' ? r.balance : undefined,
      message: typeof r.message === 'string' ? r.message : undefined,
    });
  }
  const count = (s: BalanceResultRow['status']) => results.filter((r) => r.status === s).length;
  // Failures first: they are what the admin has to act on.
  const order = { failed: 0, updated: 1, unsupported: 2 };
  results.sort((a, b) => order[a.status] - order[b.status] || a.id - b.id);
  return { total: results.length, updated: count('updated'), failed: count('failed'), unsupported: count('unsupported'), results };
}
