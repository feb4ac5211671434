import { DataTable, List, SelectInput, TextInput, useTranslate, type RaRecord } from 'react-admin';
import { ColorTag } from '../shared/ColorTag';
import { GwPagination } from '../shared/GwPagination';
import { LIST_SX, TABLE_SX } from '../shared/styles';
import { readPageSize } from '../shared/pageSize';
import { useDisplaySettings } from '../shared/hooks';
import { formatQuota, formatTimestamp } from '../shared/format';
import { EmptyRows } from '../shared/EmptyRows';
import { fromEpoch, toEpoch } from '../logs/logFilters';
import { orderStatusTone, yuanText } from '../../features/topup/topupAmounts';

const DATE_LABEL = { inputLabel: { shrink: true } };
const STATUS_CHOICES = [
  { id: 'pending', name: 'res.topup_order.status.pending' },
  { id: 'success', name: 'res.topup_order.status.success' },
];

// The time filters are kept (URL, server) as epoch seconds and typed as local date-times.
/** A creation-time bound, edited as local date and time, sent as epoch seconds. */
const timeFilter = (source: string, label: 'start' | 'end') => (
  <TextInput
    key={source}
    source={source}
    type="datetime-local"
    label={`res.topup_order.filters.${label}`}
    parse={(v: string) => toEpoch(v) ?? ''}
    format={fromEpoch}
    size="small"
    alwaysOn
    helperText={false}
    slotProps={DATE_LABEL}
  />
);

const topupOrderFilters = [
  <TextInput key="username" source="username" label="res.topup_order.filters.username" size="small" alwaysOn helperText={false} />,
  <SelectInput
    key="status"
    source="status"
    label="res.topup_order.filters.status"
    choices={STATUS_CHOICES}
    emptyText="res.common.all"
    size="small"
    alwaysOn
    helperText={false}
    sx={{ minWidth: 120 }}
  />,
  timeFilter('start_timestamp', 'start'),
  timeFilter('end_timestamp', 'end'),
];

/**
 * /topup_order (admins): every user's online top-up orders, newest first, filtered by exact
 * username, status and creation time. The amount is the quota the order buys, shown in the
 * display currency with the shared precision rules; the paid money is the provider's amount.
 * Cells do not wrap: on a narrow screen the table scrolls inside its own box.
 */
export const TopupOrderList = () => (
  <List
    resource="topup_order"
    perPage={readPageSize('topup_order')}
    filters={topupOrderFilters}
    pagination={<GwPagination />}
    empty={false}
    exporter={false}
    title="res.topup_order.title"
    sx={LIST_SX}
  >
    <TopupOrderTable />
  </List>
);

const TopupOrderTable = () => {
  const translate = useTranslate();
  const display = useDisplaySettings();
  return (
    <DataTable<RaRecord> rowClick={false} bulkActionButtons={false} sx={TABLE_SX} empty={<EmptyRows text="res.topup_order.empty" />}>
      <DataTable.Col source="id" label="res.topup_order.fields.id" disableSort sx={{ width: 60 }} />
      <DataTable.Col source="username" label="res.topup_order.fields.username" disableSort />
      <DataTable.Col
        source="trade_no"
        label="res.topup_order.fields.trade_no"
        disableSort
        render={(r) => (
          <span style={{ fontFamily: 'monospace', fontSize: 12 }} data-testid={`topup-order-${r.id}`}>
            {String(r.trade_no ?? '')}
          </span>
        )}
      />
      <DataTable.Col source="quota" label="res.topup_order.fields.amount" disableSort render={(r) => formatQuota(Number(r.quota ?? 0), display)} />
      <DataTable.Col
        source="money"
        label="res.topup_order.fields.money"
        disableSort
        render={(r) => translate('res.topup_order.yuan', { amount: yuanText(r.money) })}
      />
      <DataTable.Col
        source="payment_method"
        label="res.topup_order.fields.payment_method"
        disableSort
        render={(r) => translate(`res.topup_order.method.${String(r.payment_method)}`, { _: String(r.payment_method ?? '') })}
      />
      <DataTable.Col
        source="status"
        label="res.topup_order.fields.status"
        disableSort
        render={(r) => (
          <ColorTag tone={orderStatusTone(String(r.status))} label={translate(`res.topup_order.status.${String(r.status)}`, { _: String(r.status ?? '') })} />
        )}
      />
      <DataTable.Col source="create_time" label="res.topup_order.fields.create_time" disableSort render={(r) => formatTimestamp(Number(r.create_time))} />
      <DataTable.Col
        source="complete_time"
        label="res.topup_order.fields.complete_time"
        disableSort
        render={(r) => formatTimestamp(Number(r.complete_time ?? 0))}
      />
    </DataTable>
  );
};
