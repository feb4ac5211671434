import type { BulkItem } from '../../lib/bulk';

type T = (key: string, options?: Record<string, unknown>) => string;

/**
 * A channel batch answer's items as the report shows them: '#id name' (the name from the rows on
 * screen, when known) and the outcome in the console's language (`res.channel.msg.<action>_<code>`,
 * falling back to the server's message). Pure, unit-tested in channelBulk.test.ts.
 */
export function channelReportItems(
  items: readonly BulkItem[],
  rows: ReadonlyArray<{ id: unknown; name?: unknown }>,
  action: 'delete' | 'tag',
  translate: T,
): BulkItem[] {
  const names = new Map(rows.map((c) => [String(c.id), typeof c.name === 'string' ? c.name : '']));
  return items.map((i) => {
    const name = names.get(i.label.replace(/^#/, ''));
    const text = i.code ? translate(`res.channel.msg.${action}_${i.code}`, { _: i.message ?? i.code }) : i.message;
    return { ...i, label: name ? `${i.label} ${name}` : i.label, ...(text ? { message: text } : {}) };
  });
}
