import { Button, IconButton, Stack, Tooltip } from '@mui/material';
import EditIcon from '@mui/icons-material/EditOutlined';
import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import { DataTable, List, TextInput, useNotify, useRefresh, useTranslate, type RaRecord } from 'react-admin';
import { ColorTag } from '../shared/ColorTag';
import { GwPagination } from '../shared/GwPagination';
import { LIST_SX } from '../shared/styles';
import { ListActions } from '../shared/ListActions';
import { readPageSize } from '../shared/pageSize';
import { useCopy } from '../shared/copy';
import { useDisplaySettings, useNotifyError, useRouteDrawer } from '../shared/hooks';
import { formatQuota, formatTimestamp } from '../shared/format';
import { useGateway } from '../shared/api';
import { EmptyRows } from '../shared/EmptyRows';
import { redemptionStatusKey } from './redemptionCodes';
import { RedemptionEditDrawer } from './RedemptionEdit';
import { useConfirmedAction } from '../shared/confirm';
import { BatchButtons } from '../shared/BatchButtons';
import { RowDeleteButton } from '../shared/RowDeleteButton';

type Row = RaRecord;
const TONE = { unused: 'green', disabled: 'red', used: 'grey', unknown: 'grey' } as const;

const redemptionFilters = [<TextInput key="keyword" source="keyword" label="res.redemption.search" size="small" alwaysOn />];

const REDEMPTION_BATCH = {
  copySelected: 'res.redemption.copy_selected',
  selectOne: 'res.redemption.msg.select_one',
  confirmDelete: 'res.redemption.confirm.batch_delete',
  deletedCount: 'res.redemption.msg.deleted_count',
};

export const RedemptionList = () => {
  const drawer = useRouteDrawer('redemption');
  return (
    <>
      <List
        resource="redemption"
        perPage={readPageSize('redemption')}
        filters={redemptionFilters}
        actions={
          <ListActions addLabel="res.redemption.add" onAdd={drawer.openCreate}>
            <BatchButtons textOf={(r) => String(r.key)} texts={REDEMPTION_BATCH} />
          </ListActions>
        }
        pagination={<GwPagination />}
        empty={false}
        exporter={false}
        title="res.redemption.title"
        sx={LIST_SX}
      >
        <RedemptionTable openEdit={drawer.openEdit} />
      </List>
      <RedemptionEditDrawer creating={drawer.creating} editId={drawer.editId} onClose={drawer.close} />
    </>
  );
};

const RedemptionTable = ({ openEdit }: { openEdit: (id: string | number) => void }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const { ask: askConfirm, dialog: confirmDialog } = useConfirmedAction(refresh, notifyError);
  const dp = useGateway();
  const display = useDisplaySettings();
  const { copy, dialog: copyDialog } = useCopy();

  const setStatus = async (id: RaRecord['id'], status: number) => {
    try {
      await dp.updateMany('redemption', { ids: [id], data: { status } });
      notify('res.common.op_success', { type: 'success' });
      refresh();
    } catch (e) {
      notifyError(e);
    }
  };

  return (
    <>
      {/* The batch buttons live in the actions bar, so the bulk-actions toolbar stays hidden. */}
      <DataTable<Row> rowClick={false} bulkActionsToolbar={<></>} empty={<EmptyRows text="res.redemption.empty" />}>
        <DataTable.Col source="id" label="res.redemption.fields.id" disableSort sx={{ width: 60 }} />
        <DataTable.Col source="name" label="res.redemption.fields.name" disableSort />
        <DataTable.Col
          source="status"
          label="res.redemption.fields.status"
          disableSort
          render={(r) => {
            const k = redemptionStatusKey(Number(r.status));
            return <ColorTag tone={TONE[k as keyof typeof TONE]} label={translate(`res.redemption.status.${k}`)} />;
          }}
        />
        <DataTable.Col source="quota" label="res.redemption.fields.quota" disableSort render={(r) => formatQuota(r.quota, display)} />
        <DataTable.Col source="created_time" label="res.redemption.fields.created_time" disableSort render={(r) => formatTimestamp(r.created_time)} />
        <DataTable.Col
          source="used_user_id"
          label="res.redemption.fields.used_user_id"
          disableSort
          render={(r) => (Number(r.used_user_id) ? r.used_user_id : translate('res.common.none'))}
        />
        <DataTable.Col
          label="res.common.actions"
          render={(r) => {
            const s = Number(r.status);
            return (
              <Stack direction="row" spacing={0.5} alignItems="center">
                <Tooltip title={translate('res.redemption.copy')}>
                  <span>
                    <IconButton size="small" disabled={!r.key} onClick={() => copy(String(r.key))}>
                      <ContentCopyIcon fontSize="small" />
                    </IconButton>
                  </span>
                </Tooltip>
                {s === 1 ? (
                  <Button size="small" color="warning" onClick={() => setStatus(r.id, 2)}>
                    {translate('res.common.disable')}
                  </Button>
                ) : (
                  <Button size="small" color="success" disabled={s === 3} onClick={() => setStatus(r.id, 1)}>
                    {translate('res.common.enable')}
                  </Button>
                )}
                <Tooltip title={translate('res.common.edit')}>
                  <span>
                    <IconButton size="small" color="primary" disabled={s !== 1} onClick={() => openEdit(r.id)}>
                      <EditIcon fontSize="small" />
                    </IconButton>
                  </span>
                </Tooltip>
                <RowDeleteButton record={r as Row} confirm="res.redemption.confirm.delete" ask={askConfirm} />
              </Stack>
            );
          }}
        />
      </DataTable>
      {confirmDialog}
      {copyDialog}
    </>
  );
};
