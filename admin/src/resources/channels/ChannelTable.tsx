import { useMemo } from 'react';
import { DataTable, useListContext, useRecordContext, useStore, useTranslate } from 'react-admin';
import { TABLE_SX } from '../shared/styles';
import { EmptyText } from '../shared/EmptyText';
import { groupByTag, isTagRow } from './channelTags';
import { BalanceCell, GroupCell, NameCell, NumberCell, ResponseTimeCell, StatusCell, TypeCell } from './channelCells';
import { ChannelRowActions } from './ChannelRowActions';
import { HealthCell } from './channelHealth';
import type { ChannelRow } from './useChannelOps';

/** Where the DataTable keeps the hidden columns (react-admin's default key for this resource). */
const COLUMNS_KEY = 'channel.datatable';
/** The bulk actions live in the list's toolbar: the table only keeps the selection checkboxes. */
const NO_BULK_TOOLBAR = <></>;

/**
 * The channel table. In tag mode, channels sharing a tag become one tag row that expands into a
 * table of its channels (same columns, same hidden columns).
 */
export const ChannelTable = ({ tagMode }: { tagMode: boolean }) => {
  const { data } = useListContext<ChannelRow>();
  const rows = useMemo(() => (tagMode ? (groupByTag(data ?? []) as ChannelRow[]) : (data ?? [])), [data, tagMode]);
  return (
    <DataTable<ChannelRow>
      data={rows}
      rowClick={false}
      bulkActionButtons
      bulkActionsToolbar={NO_BULK_TOOLBAR}
      isRowSelectable={(r) => !isTagRow(r)}
      isRowExpandable={isTagRow}
      expand={tagMode ? <TagChannels /> : undefined}
      sx={TABLE_SX}
      empty={<EmptyText text="res.channel.empty" />}
    >
      {channelColumns(tagMode)}
    </DataTable>
  );
};

/** The channels of an expanded tag row. */
const TagChannels = () => {
  const row = useRecordContext<ChannelRow>();
  const [hidden] = useStore<string[]>(COLUMNS_KEY, []);
  if (!row || !isTagRow(row)) return null;
  return (
    <DataTable<ChannelRow>
      key={hidden.join(',')}
      data={row.children as ChannelRow[]}
      storeKey="channel.tagChannels"
      hiddenColumns={hidden}
      rowClick={false}
      bulkActionButtons
      bulkActionsToolbar={NO_BULK_TOOLBAR}
      sx={{ ...TABLE_SX, bgcolor: 'action.hover' }}
    >
      {channelColumns(true)}
    </DataTable>
  );
};

const ActionsLabel = () => {
  const translate = useTranslate();
  // An element label keeps the column out of the column selector: the actions are always shown.
  return <span>{translate('res.common.actions')}</span>;
};

function channelColumns(tagMode: boolean) {
  return [
    <DataTable.Col key="id" source="id" label="res.channel.fields.id" disableSort sx={{ width: 60 }} render={(r) => (isTagRow(r) ? '' : r.id)} />,
    <DataTable.Col key="name" source="name" label="res.channel.fields.name" disableSort render={(r) => <NameCell row={r as ChannelRow} tagMode={tagMode} />} />,
    <DataTable.Col key="group" source="group" label="res.channel.fields.group" disableSort render={(r) => <GroupCell row={r as ChannelRow} />} />,
    <DataTable.Col key="type" source="type" label="res.channel.fields.type" disableSort render={(r) => <TypeCell row={r as ChannelRow} />} />,
    <DataTable.Col key="status" source="status" label="res.channel.fields.status" disableSort render={(r) => <StatusCell row={r as ChannelRow} />} />,
    <DataTable.Col key="health" source="health" label="res.channel.health.column" disableSort render={(r) => <HealthCell row={r as ChannelRow} />} />,
    <DataTable.Col
      key="response_time"
      source="response_time"
      label="res.channel.fields.response_time"
      disableSort
      render={(r) => <ResponseTimeCell row={r as ChannelRow} />}
    />,
    <DataTable.Col key="balance" source="balance" label="res.channel.fields.balance" disableSort render={(r) => <BalanceCell row={r as ChannelRow} />} />,
    <DataTable.Col
      key="priority"
      source="priority"
      label="res.channel.fields.priority"
      disableSort
      render={(r) => <NumberCell row={r as ChannelRow} field="priority" />}
    />,
    <DataTable.Col
      key="weight"
      source="weight"
      label="res.channel.fields.weight"
      disableSort
      render={(r) => <NumberCell row={r as ChannelRow} field="weight" />}
    />,
    <DataTable.Col key="actions" label={<ActionsLabel />} disableSort render={(r) => <ChannelRowActions row={r as ChannelRow} />} />,
  ];
}
