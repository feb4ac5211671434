import { useMemo, useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Button, Stack, Tooltip, Typography } from '@mui/material';
import { Confirm, DataTable, List, SelectInput, TextInput, useNotify, useTranslate, type RaRecord } from 'react-admin';
import { ColorTag } from '../shared/ColorTag';
import { GwPagination } from '../shared/GwPagination';
import { LIST_SX } from '../shared/styles';
import { ListActions } from '../shared/ListActions';
import { readPageSize } from '../shared/pageSize';
import { useDisplaySettings, useNotifyError, useRouteDrawer } from '../shared/hooks';
import { compactNumber, formatQuota, stringColor } from '../shared/format';
import { storedUserRole, useGateway } from '../shared/api';
import { EmptyRows } from '../shared/EmptyRows';
import { availableActions, enableBlocked, managedRow, roleKey, userStatusKey, type ManageAction } from './userManagement';
import { useGroups } from './useGroups';
import { UserCreateDrawer, UserEditDrawer } from './UserEdit';
import { SecondFactorCell } from '../../features/security/SecondFactorCell';

type Row = RaRecord;
const ROLE_TONE = { user: 'blue', admin: 'yellow', root: 'orange', unknown: 'red' } as const;
const STATUS_TONE = { activated: 'green', banned: 'red', status3: 'grey', unknown: 'grey', deregistered: 'grey' } as const;

export const UserList = () => {
  const drawer = useRouteDrawer('user');
  const groups = useGroups();
  // The filter elements change only with the groups, so the filter form keeps its state across renders.
  const filters = useMemo(
    () => [
      <TextInput key="keyword" source="keyword" label="res.user.search" size="small" alwaysOn sx={{ minWidth: 280 }} />,
      <SelectInput
        key="group"
        source="group"
        label="res.user.fields.group"
        size="small"
        alwaysOn
        emptyText="res.common.all"
        choices={groups.map((g) => ({ id: g, name: g }))}
        translateChoice={false}
        sx={{ minWidth: 140 }}
      />,
    ],
    [groups],
  );
  return (
    <>
      <List
        resource="user"
        perPage={readPageSize('user')}
        filters={filters}
        actions={<ListActions addLabel="res.user.add" addVariant="outlined" onAdd={drawer.openCreate} />}
        pagination={<GwPagination />}
        empty={false}
        exporter={false}
        title="res.user.title"
        sx={LIST_SX}
      >
        <UserTable openEdit={drawer.openEdit} />
      </List>
      <UserCreateDrawer open={drawer.creating} onClose={drawer.close} />
      <UserEditDrawer editId={drawer.editId} onClose={drawer.close} />
    </>
  );
};

const UserTable = ({ openEdit }: { openEdit: (id: string | number) => void }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const dp = useGateway();
  const display = useDisplaySettings();
  const myRole = storedUserRole();
  const queryClient = useQueryClient();
  const [confirm, setConfirm] = useState<null | { row: Row; action: ManageAction }>(null);

  // The answer's status/role go into the loaded list (react-admin's cache) until the list reloads.
  const manageCall = useMutation({
    mutationFn: ({ row, action }: { row: Row; action: ManageAction }) => dp.manageUser(row.id, action),
    onSuccess: (r, { row, action }) => {
      queryClient.setQueriesData<{ data: Row[] }>({ queryKey: ['user', 'getList'] }, (old) =>
        old ? { ...old, data: old.data.map((x) => (x.id === row.id ? managedRow(x, action, r.data) : x)) } : old,
      );
      notify('res.common.op_success', { type: 'success' });
    },
    onError: (e) => notifyError(e),
  });
  const manage = (row: Row, action: ManageAction) => manageCall.mutate({ row, action });

  return (
    <>
      <DataTable<Row> rowClick={false} bulkActionButtons={false} empty={<EmptyRows text="res.user.empty" />}>
        <DataTable.Col source="id" label="res.user.fields.id" disableSort sx={{ width: 60 }} />
        <DataTable.Col
          source="username"
          label="res.user.fields.username"
          disableSort
          render={(r) => (
            <Tooltip title={r.display_name || ''}>
              <Stack spacing={0}>
                <Typography variant="body2" sx={{ fontWeight: 500 }}>
                  {r.username}
                </Typography>
                {r.display_name && r.display_name !== r.username ? (
                  <Typography variant="caption" color="text.secondary">
                    {r.display_name}
                  </Typography>
                ) : null}
              </Stack>
            </Tooltip>
          )}
        />
        <DataTable.Col
          source="group"
          label="res.user.fields.group"
          disableSort
          render={(r) => <ColorTag tone={stringColor(String(r.group || 'default'))} label={r.group || 'default'} />}
        />
        <DataTable.Col
          label="res.user.fields.stats"
          render={(r) => (
            <Stack direction="row" sx={{ flexWrap: 'wrap', gap: 0.5, minWidth: 140 }} data-testid="user-stats">
              <Tooltip title={translate('res.user.fields.quota')}>
                <span>
                  <ColorTag tone="white" label={`${translate('res.user.chip.quota')} ${formatQuota(r.quota, display)}`} />
                </span>
              </Tooltip>
              <Tooltip title={translate('res.user.fields.used_quota')}>
                <span>
                  <ColorTag tone="white" label={`${translate('res.user.chip.used_quota')} ${formatQuota(r.used_quota, display)}`} />
                </span>
              </Tooltip>
              <Tooltip title={translate('res.user.fields.request_count')}>
                <span>
                  <ColorTag tone="white" label={`${translate('res.user.chip.request_count')} ${compactNumber(r.request_count)}`} />
                </span>
              </Tooltip>
            </Stack>
          )}
        />
        <DataTable.Col
          label="res.user.fields.invitation"
          render={(r) => (
            <Stack direction="row" sx={{ flexWrap: 'wrap', gap: 0.5, minWidth: 120 }}>
              <Tooltip title={translate('res.user.fields.aff_count')}>
                <span>
                  <ColorTag tone="white" label={`${translate('res.user.chip.aff_count')} ${String(r.aff_count ?? 0)}`} />
                </span>
              </Tooltip>
              <Tooltip title={translate('res.user.fields.aff_history_quota')}>
                <span>
                  <ColorTag tone="white" label={`${translate('res.user.chip.aff_history_quota')} ${formatQuota(r.aff_history_quota, display)}`} />
                </span>
              </Tooltip>
              <Tooltip title={translate('res.user.fields.inviter_id')}>
                <span>
                  <ColorTag
                    tone="white"
                    label={`${translate('res.user.chip.inviter_id')} ${Number(r.inviter_id) ? String(r.inviter_id) : translate('res.common.none')}`}
                  />
                </span>
              </Tooltip>
            </Stack>
          )}
        />
        <DataTable.Col<Row>
          source="role"
          label="res.user.fields.role"
          disableSort
          render={(r) => {
            const k = roleKey(Number(r.role));
            return <ColorTag tone={ROLE_TONE[k as keyof typeof ROLE_TONE]} label={translate(`res.user.role.${k}`)} />;
          }}
        />
        <DataTable.Col<Row>
          source="status"
          label="res.user.fields.status"
          disableSort
          render={(r) => {
            const k = userStatusKey(r as never);
            return <ColorTag tone={STATUS_TONE[k as keyof typeof STATUS_TONE]} label={translate(`res.user.status.${k}`)} />;
          }}
        />
        <DataTable.Col<Row> label="feat.security.admin.column" render={(r) => <SecondFactorCell row={r as never} myRole={myRole} />} />
        <DataTable.Col<Row>
          label="res.common.actions"
          render={(v) => {
            const acts = availableActions(v as never, myRole);
            if (userStatusKey(v as never) === 'deregistered')
              return (
                <Typography variant="caption" color="text.secondary">
                  -
                </Typography>
              );
            return (
              <Stack direction="row" spacing={0.5}>
                {acts.includes('promote') && (
                  <Button size="small" onClick={() => setConfirm({ row: v, action: 'promote' })}>
                    {translate('res.user.action.promote')}
                  </Button>
                )}
                {acts.includes('demote') && (
                  <Button size="small" color="secondary" onClick={() => setConfirm({ row: v, action: 'demote' })}>
                    {translate('res.user.action.demote')}
                  </Button>
                )}
                {acts.includes('disable') && (
                  <Button size="small" color="warning" onClick={() => manage(v, 'disable')}>
                    {translate('res.common.disable')}
                  </Button>
                )}
                {acts.includes('enable') && (
                  <Button size="small" color="success" disabled={enableBlocked(v as never)} onClick={() => manage(v, 'enable')}>
                    {translate('res.common.enable')}
                  </Button>
                )}
                <Button size="small" onClick={() => openEdit(v.id)}>
                  {translate('res.common.edit')}
                </Button>
                {acts.includes('delete') && (
                  <Button size="small" color="error" onClick={() => setConfirm({ row: v, action: 'delete' })}>
                    {translate('res.user.action.delete')}
                  </Button>
                )}
              </Stack>
            );
          }}
        />
      </DataTable>
      <Confirm
        isOpen={!!confirm}
        title="res.common.confirm_title"
        content={confirm ? `res.user.confirm.${confirm.action}` : ''}
        translateOptions={{ name: confirm?.row.username ?? '' }}
        onClose={() => setConfirm(null)}
        onConfirm={() => {
          const c = confirm;
          setConfirm(null);
          if (c) manage(c.row, c.action);
        }}
      />
    </>
  );
};
