import { Alert, Box, IconButton, Stack, Switch, Tooltip, Typography } from '@mui/material';
import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import EditIcon from '@mui/icons-material/EditOutlined';
import { DataTable, List, TextInput, useNotify, useRefresh, useTranslate, type RaRecord } from 'react-admin';
import { ColorTag } from '../shared/ColorTag';
import { GwPagination } from '../shared/GwPagination';
import { LIST_SX } from '../shared/styles';
import { ListActions } from '../shared/ListActions';
import { readPageSize } from '../shared/pageSize';
import { useCopy } from '../shared/copy';
import { useDisplaySettings, useNotifyError, useRouteDrawer } from '../shared/hooks';
import { formatQuota, formatTimestamp, stringColor } from '../shared/format';
import { useGateway } from '../shared/api';
import { maskKey, tokenStatusKey } from './tokenForm';
import { fetchTokenKey } from './tokenKey';
import { TokenEditDrawer } from './TokenEdit';
import { useConfirmedAction } from '../shared/confirm';
import { BatchButtons } from '../shared/BatchButtons';
import { RowDeleteButton } from '../shared/RowDeleteButton';
import { EmptyRows } from '../shared/EmptyRows';

type Row = RaRecord;

const STATUS_TONE: Record<string, 'green' | 'blue' | 'red' | 'yellow' | 'grey'> = {
  enabled: 'green',
  enabled_limited: 'blue',
  disabled: 'red',
  expired: 'yellow',
  exhausted: 'grey',
  unknown: 'grey',
};

/** Search by name or by key; the data provider trims them and drops a pasted key's `sk-` prefix. */
const tokenFilters = [
  <TextInput key="keyword" source="keyword" label="res.token.search_keyword" size="small" alwaysOn />,
  <TextInput key="token" source="token" label="res.token.search_token" size="small" alwaysOn />,
];

const TOKEN_BATCH = {
  copySelected: 'res.token.copy_selected',
  selectOne: 'res.token.msg.select_one',
  confirmDelete: 'res.token.confirm.batch_delete',
  deletedCount: 'res.token.msg.deleted_count',
};

export const TokenList = () => {
  const drawer = useRouteDrawer('token');
  const translate = useTranslate();
  return (
    <>
      <Box sx={{ pt: 2 }}>
        <Alert severity="warning">{translate('res.token.banner')}</Alert>
      </Box>
      <List
        resource="token"
        perPage={readPageSize('token')}
        filters={tokenFilters}
        actions={
          <ListActions addLabel="res.token.add" onAdd={drawer.openCreate}>
            <BatchButtons textOf={(r) => fetchTokenKey(r.id)} texts={TOKEN_BATCH} />
          </ListActions>
        }
        pagination={<GwPagination />}
        empty={false}
        exporter={false}
        title="res.token.title"
        sx={LIST_SX}
      >
        <TokenTable openEdit={drawer.openEdit} />
      </List>
      <TokenEditDrawer creating={drawer.creating} editId={drawer.editId} onClose={drawer.close} />
    </>
  );
};

const TokenTable = ({ openEdit }: { openEdit: (id: string | number) => void }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const { ask: askConfirm, dialog: confirmDialog } = useConfirmedAction(refresh, notifyError);
  const dp = useGateway();
  const display = useDisplaySettings();
  const { copy, dialog: copyDialog } = useCopy();

  // The list carries masked keys: the whole key is asked for when copied.
  const copyKey = async (id: Row['id']) => {
    try {
      await copy(await fetchTokenKey(id));
    } catch (e) {
      notifyError(e);
    }
  };

  const toggle = async (row: Row) => {
    try {
      await dp.updateMany('token', { ids: [row.id], data: { status: Number(row.status) === 1 ? 2 : 1 } });
      notify('res.common.op_success', { type: 'success' });
      refresh();
    } catch (e) {
      notifyError(e);
    }
  };

  return (
    <>
      {/* The batch buttons live in the actions bar, so the bulk-actions toolbar stays hidden. */}
      <DataTable<Row> rowClick={false} bulkActionsToolbar={<></>} empty={<EmptyRows text="res.token.empty" />}>
        <DataTable.Col
          source="name"
          label="res.token.fields.name"
          disableSort
          render={(r) => (
            <Typography variant="body2" sx={{ fontWeight: 500 }}>
              {r.name}
            </Typography>
          )}
        />
        <DataTable.Col
          source="status"
          label="res.token.fields.status"
          disableSort
          render={(r) => {
            const k = tokenStatusKey(r as never);
            return <ColorTag tone={STATUS_TONE[k]} label={translate(`res.token.status.${k}`)} />;
          }}
        />
        <DataTable.Col
          source="key"
          label="res.token.fields.key"
          disableSort
          render={(r) => (
            <Stack direction="row" alignItems="center" spacing={0.5}>
              <Typography variant="body2" sx={{ fontFamily: 'monospace' }}>
                {r.key ? maskKey(String(r.key)) : '-'}
              </Typography>
              {r.key ? (
                <Tooltip title={translate('res.token.copy')}>
                  <IconButton size="small" data-testid={`token-copy-${r.id}`} onClick={() => void copyKey(r.id)}>
                    <ContentCopyIcon fontSize="inherit" />
                  </IconButton>
                </Tooltip>
              ) : null}
            </Stack>
          )}
        />
        <DataTable.Col
          source="remain_quota"
          label="res.token.fields.quota"
          disableSort
          render={(r) => (
            <Stack spacing={0.25}>
              <Typography variant="body2">
                {translate('res.token.remain')}: {r.unlimited_quota ? translate('res.token.unlimited') : formatQuota(r.remain_quota, display)}
              </Typography>
              <Typography variant="caption" color="text.secondary">
                {translate('res.token.used')}: {formatQuota(r.used_quota, display)}
              </Typography>
            </Stack>
          )}
        />
        <DataTable.Col
          source="group"
          label="res.token.fields.group"
          disableSort
          render={(r) =>
            r.group ? (
              <ColorTag tone={stringColor(r.group)} label={r.group} />
            ) : (
              <Typography variant="caption" color="text.secondary">
                {translate('res.token.user_group')}
              </Typography>
            )
          }
        />
        <DataTable.Col source="created_time" label="res.token.fields.created_time" disableSort render={(r) => formatTimestamp(r.created_time)} />
        <DataTable.Col
          source="expired_time"
          label="res.token.fields.expired_time"
          disableSort
          render={(r) => (Number(r.expired_time) === -1 ? translate('res.token.never') : formatTimestamp(r.expired_time))}
        />
        <DataTable.Col<Row>
          label="res.common.actions"
          render={(r) => (
            <Stack direction="row" spacing={0.5} alignItems="center">
              <Tooltip title={translate(Number(r.status) === 1 ? 'res.common.disable' : 'res.common.enable')}>
                <Switch size="small" checked={Number(r.status) === 1} onChange={() => toggle(r)} />
              </Tooltip>
              <Tooltip title={translate('res.common.edit')}>
                <IconButton size="small" color="primary" onClick={() => openEdit(r.id)}>
                  <EditIcon fontSize="small" />
                </IconButton>
              </Tooltip>
              <RowDeleteButton record={r as Row} confirm="res.token.confirm.delete" ask={askConfirm} />
            </Stack>
          )}
        />
      </DataTable>
      {confirmDialog}
      {copyDialog}
    </>
  );
};
