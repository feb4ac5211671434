import { useState, type ReactNode } from 'react';
import { Alert, Box, Button, IconButton, LinearProgress, Tooltip } from '@mui/material';
import RefreshIcon from '@mui/icons-material/Refresh';
import SearchIcon from '@mui/icons-material/Search';
import { ColumnsButton, DataTable, Form, List, TextInput, useListContext, useRefresh, useTranslate } from 'react-admin';
import { useFormContext } from 'react-hook-form';
import { GwPagination } from '../../resources/shared/GwPagination';
import { EmptyText } from '../../resources/shared/EmptyText';
import { readPageSize } from '../../resources/shared/pageSize';
import { LIST_SX, TABLE_SX } from '../../resources/shared/styles';
import { LOG_RESOURCE, fromLogFilter, pagerCount, toLogFilter, type LogFilterForm, type LogFilterValues, type LogKind, type Row } from './taskRecords';

/** Filter bar: compact fields on one line on desktop, full-width fields on phones. */
export const BAR_SX = {
  display: 'flex',
  flexWrap: 'wrap',
  gap: 1,
  alignItems: 'center',
  p: 2,
  '& .MuiFormControl-root': { m: 0 },
  '@media (max-width:600px)': { '& .MuiFormControl-root': { flex: '1 1 100%', width: '100% !important' } },
} as const;

export interface LogColumn {
  key: string;
  label: string;
  render: (row: Row) => ReactNode;
  align?: 'left' | 'right' | 'center';
  minWidth?: number;
}

interface Props {
  kind: LogKind;
  admin: boolean;
  title: string;
  idLabel: string;
  columns: LogColumn[];
  defaults: () => LogFilterForm;
  banner?: ReactNode;
}

const DATE_LABEL = { inputLabel: { shrink: true } };

/**
 * A drawing/task log: a react-admin list of the `midjourney` or `task` resource, its filters kept
 * in the URL (by default the log's recent range), columns to choose, and page sizes 10/20/50/100
 * remembered per list. The server gives no total: the pager moves on while a page comes back full.
 */
export function LogPage({ kind, admin, title, idLabel, columns, defaults, banner }: Props) {
  const resource = LOG_RESOURCE[kind];
  // The default range is taken when the page opens (it is relative to now).
  const [initialFilter] = useState(() => toLogFilter(kind, defaults(), admin));
  return (
    <List
      resource={resource}
      perPage={readPageSize(resource)}
      filterDefaultValues={initialFilter}
      actions={false}
      pagination={<LogPagination />}
      empty={false}
      exporter={false}
      title={title}
      storeKey={false}
      sx={LIST_SX}
    >
      <Box>
        {banner}
        <LogFilterBar kind={kind} admin={admin} idLabel={idLabel} defaults={defaults} />
        <LogTable kind={kind} columns={columns} />
      </Box>
    </List>
  );
}

/** The filters: the form starts from the list's filters and applies them on search; the channel is an admin filter. */
function LogFilterBar({ kind, admin, idLabel, defaults }: Pick<Props, 'kind' | 'admin' | 'idLabel' | 'defaults'>) {
  const { filterValues, setFilters } = useListContext();
  const refresh = useRefresh();
  return (
    <Form
      key={JSON.stringify(filterValues ?? {})}
      defaultValues={fromLogFilter(kind, filterValues ?? {})}
      onSubmit={(values: Record<string, unknown>) => {
        const next = toLogFilter(kind, values as LogFilterValues, admin);
        // Searching again with the same filters asks the server again.
        if (JSON.stringify(next) === JSON.stringify(filterValues ?? {})) refresh();
        else setFilters(next, {});
      }}
      noValidate
    >
      <Box sx={BAR_SX}>
        {admin && (
          <TextInput
            source="channel"
            label="feat.tasklogs.filter.channel"
            parse={(v: string) => v.replace(/\D/g, '')}
            helperText={false}
            fullWidth={false}
            sx={{ width: 110 }}
          />
        )}
        <TextInput source="task_id" label={idLabel} helperText={false} fullWidth={false} sx={{ width: 180 }} />
        <TextInput
          source="start"
          type="datetime-local"
          label="feat.tasklogs.filter.start"
          helperText={false}
          slotProps={DATE_LABEL}
          fullWidth={false}
          sx={{ width: 230 }}
        />
        <TextInput
          source="end"
          type="datetime-local"
          label="feat.tasklogs.filter.end"
          helperText={false}
          slotProps={DATE_LABEL}
          fullWidth={false}
          sx={{ width: 230 }}
        />
        <FilterButtons kind={kind} admin={admin} defaults={defaults} />
      </Box>
    </Form>
  );
}

function FilterButtons({ kind, admin, defaults }: Pick<Props, 'kind' | 'admin' | 'defaults'>) {
  const translate = useTranslate();
  const refresh = useRefresh();
  const { setFilters } = useListContext();
  const { reset } = useFormContext();
  return (
    <>
      <Button type="submit" variant="contained" startIcon={<SearchIcon />}>
        {translate('feat.tasklogs.filter.search')}
      </Button>
      <Button
        onClick={() => {
          // Back to the log's default range, taken anew.
          const d = defaults();
          reset(d);
          setFilters(toLogFilter(kind, d, admin), {});
        }}
      >
        {translate('feat.tasklogs.filter.reset')}
      </Button>
      <ColumnsButton />
      <Tooltip title={translate('feat.tasklogs.filter.refresh')}>
        <IconButton onClick={() => refresh()} aria-label="refresh">
          <RefreshIcon />
        </IconButton>
      </Tooltip>
    </>
  );
}

/** The table: the given columns (each can be hidden with the columns button), a bar while loading. */
function LogTable({ kind, columns }: Pick<Props, 'kind' | 'columns'>) {
  const { isFetching } = useListContext();
  return (
    <Box sx={{ position: 'relative' }}>
      {isFetching && <LinearProgress sx={{ position: 'absolute', top: 0, left: 0, right: 0, zIndex: 1 }} />}
      <DataTable<Row> rowClick={false} bulkActionButtons={false} sx={TABLE_SX} empty={<EmptyText text="feat.tasklogs.empty" />} data-testid={`${kind}-table`}>
        {columns.map((c) => (
          <DataTable.Col<Row>
            key={c.key}
            source={c.key}
            label={c.label}
            align={c.align}
            disableSort
            render={c.render}
            cellSx={c.minWidth ? () => ({ minWidth: c.minWidth }) : undefined}
          />
        ))}
      </DataTable>
    </Box>
  );
}

/** Paging without a total (10/20/50/100, the size stored per list): "more" while the last page came back full. */
function LogPagination() {
  const translate = useTranslate();
  const { page, perPage, data, hasNextPage } = useListContext();
  const shown = data?.length ?? 0;
  const more = !!hasNextPage;
  return (
    <GwPagination
      count={pagerCount(page, perPage, shown, more)}
      labelRowsPerPage={translate('feat.tasklogs.rows_per_page')}
      labelDisplayedRows={({ from, to }) =>
        translate(more ? 'feat.tasklogs.page_range_more' : 'feat.tasklogs.page_range', { from, to, count: pagerCount(page, perPage, shown, false) })
      }
    />
  );
}

/** Inline banner (admins, drawing log). */
export function InfoBanner({ text }: { text: string }) {
  return (
    <Alert severity="info" sx={{ m: 2, mb: 0 }} data-testid="callback-banner">
      {text}
    </Alert>
  );
}
