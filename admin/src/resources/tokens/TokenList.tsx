import { useState } from 'react';
import { Alert, Box, Button, IconButton, Stack, Switch, TextField, Tooltip, Typography } from '@mui/material';
import AddIcon from '@mui/icons-material/Add';
import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import RefreshIcon from '@mui/icons-material/Refresh';
import EditIcon from '@mui/icons-material/EditOutlined';
import DeleteIcon from '@mui/icons-material/DeleteOutline';
import { List, useListContext, useNotify, useRefresh, useTranslate, type RaRecord } from 'react-admin';
import { ColorTag } from '../shared/ColorTag';
import { GwTable, type Column } from '../shared/GwTable';
import { GwPagination } from '../shared/GwPagination';
import { FILTER_BAR_SX, LIST_SX } from '../shared/styles';
import { readPageSize } from '../shared/pageSize';
import { useCopy } from '../shared/copy';
import { useDisplaySettings, useNotifyError, useRouteDrawer } from '../shared/hooks';
import { formatQuota, formatTimestamp, stringColor } from '../shared/format';
import { useGateway } from '../shared/api';
import { maskKey, tokenStatusKey } from './tokenForm';
import { TokenEditDrawer } from './TokenEdit';
import { useConfirmedAction } from '../shared/confirm';

type Row = RaRecord & Record<string, any>;

const STATUS_TONE: Record<string, 'green' | 'blue' | 'red' | 'yellow' | 'grey'> = {
  enabled: 'green',
  enabled_limited: 'blue',
  disabled: 'red',
  expired: 'yellow',
  exhausted: 'grey',
  unknown: 'grey',
};

export const TokenList = () => {
  const drawer = useRouteDrawer('token');
  return (
    <>
      <List resource="token" perPage={readPageSize('token')} actions={false} pagination={<GwPagination />} empty={false} exporter={false} title="res.token.title" storeKey={false} sx={LIST_SX} disableSyncWithLocation>
        <TokenListBody openCreate={drawer.openCreate} openEdit={drawer.openEdit} />
      </List>
      <TokenEditDrawer creating={drawer.creating} editId={drawer.editId} onClose={drawer.close} />
    </>
  );
};


const TokenListBody = ({ openCreate, openEdit }: { openCreate: () => void; openEdit: (id: string | number) => void }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const { ask: askConfirm, dialog: confirmDialog } = useConfirmedAction(refresh, notifyError);
  const dp = useGateway();
  const display = useDisplaySettings();
  const { selectedIds, onUnselectItems, data, setFilters, filterValues } = useListContext<Row>();
  const { copy, dialog } = useCopy();
  const [keyword, setKeyword] = useState(String(filterValues.keyword ?? ''));
  const [token, setToken] = useState(String(filterValues.token ?? ''));

  const toggle = async (row: Row) => {
    try {
      await dp.updateMany('token', { ids: [row.id], data: { status: Number(row.status) === 1 ? 2 : 1 } });
      notify('res.common.op_success', { type: 'success' });
      refresh();
    } catch (e) {
      notifyError(e);
    }
  };

  const columns: Column<Row>[] = [
    { key: 'name', label: 'res.token.fields.name', render: (r) => <Typography variant="body2" sx={{ fontWeight: 500 }}>{r.name}</Typography> },
    {
      key: 'status',
      label: 'res.token.fields.status',
      render: (r) => {
        const k = tokenStatusKey(r as never);
        return <ColorTag tone={STATUS_TONE[k]} label={translate(`res.token.status.${k}`)} />;
      },
    },
    {
      key: 'key',
      label: 'res.token.fields.key',
      render: (r) => (
        <Stack direction="row" alignItems="center" spacing={0.5}>
          <Typography variant="body2" sx={{ fontFamily: 'monospace' }}>
            {r.key ? maskKey(String(r.key)) : '-'}
          </Typography>
          {r.key ? (
            <Tooltip title={translate('res.token.copy')}>
              <IconButton size="small" onClick={() => copy(`sk-${r.key}`)}>
                <ContentCopyIcon fontSize="inherit" />
              </IconButton>
            </Tooltip>
          ) : null}
        </Stack>
      ),
    },
    {
      key: 'quota',
      label: 'res.token.fields.quota',
      render: (r) => (
        <Stack spacing={0.25}>
          <Typography variant="body2">
            {translate('res.token.remain')}: {r.unlimited_quota ? translate('res.token.unlimited') : formatQuota(r.remain_quota, display)}
          </Typography>
          <Typography variant="caption" color="text.secondary">
            {translate('res.token.used')}: {formatQuota(r.used_quota, display)}
          </Typography>
        </Stack>
      ),
    },
    { key: 'group', label: 'res.token.fields.group', render: (r) => (r.group ? <ColorTag tone={stringColor(r.group)} label={r.group} /> : <Typography variant="caption" color="text.secondary">{translate('res.token.user_group')}</Typography>) },
    { key: 'created_time', label: 'res.token.fields.created_time', render: (r) => formatTimestamp(r.created_time) },
    {
      key: 'expired_time',
      label: 'res.token.fields.expired_time',
      render: (r) => (Number(r.expired_time) === -1 ? translate('res.token.never') : formatTimestamp(r.expired_time)),
    },
    {
      key: 'actions',
      label: 'res.common.actions',
      render: (r) => (
        <Stack direction="row" spacing={0.5} alignItems="center">
          <Tooltip title={translate(Number(r.status) === 1 ? 'res.common.disable' : 'res.common.enable')}>
            <Switch size="small" checked={Number(r.status) === 1} onChange={() => toggle(r)} />
          </Tooltip>
          <Tooltip title={translate('res.common.edit')}>
            <IconButton size="small" color="primary" onClick={() => openEdit(r.id)}>
              <EditIcon fontSize="small" />
            </IconButton>
          </Tooltip>
          <Tooltip title={translate('res.common.delete')}>
          <IconButton
            size="small"
            color="error"
            onClick={() =>
              askConfirm({
                content: 'res.token.confirm.delete',
                action: async () => {
                  await dp.delete('token', { id: r.id, previousData: r });
                  notify('res.common.deleted', { type: 'success' });
                },
              })
            }
          >
            <DeleteIcon fontSize="small" />
          </IconButton>
          </Tooltip>
        </Stack>
      ),
    },
  ];

  const selectedKeys = () => (data ?? []).filter((r) => selectedIds.includes(r.id)).map((r) => `sk-${r.key}`);

  return (
    <Box>
      <Box sx={{ p: 2, pb: 0 }}>
        <Alert severity="warning">{translate('res.token.banner')}</Alert>
      </Box>
      <Box component="form" noValidate onSubmit={(e) => { e.preventDefault(); setFilters({ keyword: keyword.trim() || undefined, token: token.trim().replace(/^sk-/, '') || undefined }, {}); }} sx={{ ...FILTER_BAR_SX, p: 2, display: 'flex', flexWrap: 'wrap', gap: 1, alignItems: 'center' }}>
        <Button variant="contained" startIcon={<AddIcon />} onClick={openCreate}>
          {translate('res.token.add')}
        </Button>
        <Button
          variant="outlined"
          onClick={() => {
            const keys = selectedKeys();
            if (!keys.length) return notify('res.token.msg.select_one', { type: 'warning' });
            copy(keys.join('\n'));
          }}
        >
          {translate('res.token.copy_selected')}
        </Button>
        <Button
          variant="outlined"
          color="error"
          onClick={() => {
            if (!selectedIds.length) return notify('res.token.msg.select_one', { type: 'warning' });
            askConfirm({
              content: 'res.token.confirm.batch_delete',
              action: async () => {
                await dp.deleteMany('token', { ids: selectedIds });
                notify('res.token.msg.deleted_count', { type: 'success', messageArgs: { count: selectedIds.length } });
                onUnselectItems();
              },
            });
          }}
        >
          {translate('res.common.delete_selected')}
        </Button>
        <Box sx={{ flex: 1 }} />
        <TextField size="small" label={translate('res.token.search_keyword')} value={keyword} onChange={(e) => setKeyword(e.target.value)} />
        <TextField size="small" label={translate('res.token.search_token')} value={token} onChange={(e) => setToken(e.target.value)} />
        <Button type="submit" variant="contained">
          {translate('res.common.search')}
        </Button>
        <IconButton onClick={() => refresh()}>
          <RefreshIcon />
        </IconButton>
      </Box>
      <GwTable<Row> columns={columns} selectable emptyText="res.token.empty" />
      {confirmDialog}
      {dialog}
    </Box>
  );
};
