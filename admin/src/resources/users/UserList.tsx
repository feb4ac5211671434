import { useEffect, useState } from 'react';
import { Box, Button, IconButton, MenuItem, Stack, TextField, Tooltip, Typography } from '@mui/material';
import AddIcon from '@mui/icons-material/Add';
import RefreshIcon from '@mui/icons-material/Refresh';
import { Confirm, List, useListContext, useNotify, useRefresh, useTranslate, type RaRecord } from 'react-admin';
import { ColorTag } from '../shared/ColorTag';
import { GwTable, type Column } from '../shared/GwTable';
import { GwPagination } from '../shared/GwPagination';
import { FILTER_BAR_SX, LIST_SX } from '../shared/styles';
import { readPageSize } from '../shared/pageSize';
import { useDisplaySettings, useNotifyError, useRouteDrawer } from '../shared/hooks';
import { compactNumber, formatQuota, stringColor } from '../shared/format';
import { storedUserRole, useGateway } from '../shared/api';
import { availableActions, enableBlocked, roleKey, userStatusKey, type ManageAction } from './userManagement';
import { UserCreateDrawer, UserEditDrawer } from './UserEdit';

type Row = RaRecord & Record<string, any>;
const ROLE_TONE = { user: 'blue', admin: 'yellow', root: 'orange', unknown: 'red' } as const;
const STATUS_TONE = { activated: 'green', banned: 'red', status3: 'grey', unknown: 'grey', deregistered: 'grey' } as const;

export const UserList = () => {
  const drawer = useRouteDrawer('user');
  return (
    <>
      <List resource="user" perPage={readPageSize('user')} actions={false} pagination={<GwPagination />} empty={false} exporter={false} title="res.user.title" storeKey={false} sx={LIST_SX} disableSyncWithLocation>
        <Body openCreate={drawer.openCreate} openEdit={drawer.openEdit} />
      </List>
      <UserCreateDrawer open={drawer.creating} onClose={drawer.close} />
      <UserEditDrawer editId={drawer.editId} onClose={drawer.close} />
    </>
  );
};

const Body = ({ openCreate, openEdit }: { openCreate: () => void; openEdit: (id: string | number) => void }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const dp = useGateway();
  const display = useDisplaySettings();
  const myRole = storedUserRole();
  const { setFilters, filterValues, data } = useListContext<Row>();
  const [keyword, setKeyword] = useState(String(filterValues.keyword ?? ''));
  const [group, setGroup] = useState(String(filterValues.group ?? ''));
  const [groups, setGroups] = useState<string[]>([]);
  /** Rows changed by manage actions: the answer's status/role replace the row's (deleted → deregistered). */
  const [overrides, setOverrides] = useState<Record<string, { status?: number; role?: number; deleted?: boolean }>>({});
  const [confirm, setConfirm] = useState<null | { row: Row; action: ManageAction }>(null);

  useEffect(() => {
    dp.getGroups().then((r) => setGroups(r.data)).catch(() => undefined);
  }, [dp]);
  useEffect(() => setOverrides({}), [data]);

  const view = (r: Row): Row => {
    const o = overrides[String(r.id)];
    if (!o) return r;
    return { ...r, status: o.status ?? r.status, role: o.role ?? r.role, DeletedAt: o.deleted ? 'deleted' : r.DeletedAt };
  };

  const manage = async (row: Row, action: ManageAction) => {
    try {
      const r = await dp.manageUser(row.id, action);
      setOverrides((o) => ({
        ...o,
        [String(row.id)]: action === 'delete' ? { ...o[String(row.id)], deleted: true } : { ...o[String(row.id)], status: r.data.status ?? row.status, role: r.data.role ?? row.role },
      }));
      notify('res.common.op_success', { type: 'success' });
    } catch (e) {
      notifyError(e);
    }
  };

  const columns: Column<Row>[] = [
    { key: 'id', label: 'res.user.fields.id', render: (r) => r.id, width: 60 },
    {
      key: 'username',
      label: 'res.user.fields.username',
      render: (r) => (
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
      ),
    },
    { key: 'group', label: 'res.user.fields.group', render: (r) => <ColorTag tone={stringColor(String(r.group || 'default'))} label={r.group || 'default'} /> },
    {
      key: 'stats',
      label: 'res.user.fields.stats',
      render: (r) => (
        <Stack direction="row" spacing={0.5}>
          <Tooltip title={translate('res.user.fields.quota')}>
            <span><ColorTag tone="white" label={formatQuota(r.quota, display)} /></span>
          </Tooltip>
          <Tooltip title={translate('res.user.fields.used_quota')}>
            <span><ColorTag tone="white" label={formatQuota(r.used_quota, display)} /></span>
          </Tooltip>
          <Tooltip title={translate('res.user.fields.request_count')}>
            <span><ColorTag tone="white" label={compactNumber(r.request_count)} /></span>
          </Tooltip>
        </Stack>
      ),
    },
    {
      key: 'aff',
      label: 'res.user.fields.invitation',
      render: (r) => (
        <Stack direction="row" spacing={0.5}>
          <Tooltip title={translate('res.user.fields.aff_count')}>
            <span><ColorTag tone="white" label={String(r.aff_count ?? 0)} /></span>
          </Tooltip>
          <Tooltip title={translate('res.user.fields.aff_history_quota')}>
            <span><ColorTag tone="white" label={formatQuota(r.aff_history_quota, display)} /></span>
          </Tooltip>
          <Tooltip title={translate('res.user.fields.inviter_id')}>
            <span><ColorTag tone="white" label={Number(r.inviter_id) ? String(r.inviter_id) : translate('res.common.none')} /></span>
          </Tooltip>
        </Stack>
      ),
    },
    { key: 'role', label: 'res.user.fields.role', render: (r) => { const k = roleKey(Number(view(r).role)); return <ColorTag tone={ROLE_TONE[k as keyof typeof ROLE_TONE]} label={translate(`res.user.role.${k}`)} />; } },
    { key: 'status', label: 'res.user.fields.status', render: (r) => { const k = userStatusKey(view(r) as never); return <ColorTag tone={STATUS_TONE[k as keyof typeof STATUS_TONE]} label={translate(`res.user.status.${k}`)} />; } },
    {
      key: 'actions',
      label: 'res.common.actions',
      render: (r) => {
        const v = view(r);
        const acts = availableActions(v as never, myRole);
        if (userStatusKey(v as never) === 'deregistered') return <Typography variant="caption" color="text.secondary">-</Typography>;
        return (
          <Stack direction="row" spacing={0.5}>
            {acts.includes('promote') && <Button size="small" onClick={() => setConfirm({ row: v, action: 'promote' })}>{translate('res.user.action.promote')}</Button>}
            {acts.includes('demote') && <Button size="small" color="secondary" onClick={() => setConfirm({ row: v, action: 'demote' })}>{translate('res.user.action.demote')}</Button>}
            {acts.includes('disable') && <Button size="small" color="warning" onClick={() => manage(v, 'disable')}>{translate('res.common.disable')}</Button>}
            {acts.includes('enable') && <Button size="small" color="success" disabled={enableBlocked(v as never)} onClick={() => manage(v, 'enable')}>{translate('res.common.enable')}</Button>}
            <Button size="small" onClick={() => openEdit(r.id)}>{translate('res.common.edit')}</Button>
            {acts.includes('delete') && <Button size="small" color="error" onClick={() => setConfirm({ row: v, action: 'delete' })}>{translate('res.user.action.delete')}</Button>}
          </Stack>
        );
      },
    },
  ];

  return (
    <Box>
      <Box component="form" noValidate onSubmit={(e) => { e.preventDefault(); setFilters({ keyword: keyword.trim() || undefined, group: group || undefined }, {}); }} sx={{ ...FILTER_BAR_SX, p: 2, display: 'flex', gap: 1, flexWrap: 'wrap', alignItems: 'center' }}>
        <TextField size="small" label={translate('res.user.search')} value={keyword} onChange={(e) => setKeyword(e.target.value)} sx={{ minWidth: 280 }} />
        <TextField select size="small" label={translate('res.user.fields.group')} value={group} onChange={(e) => setGroup(e.target.value)} sx={{ minWidth: 140 }} slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}>
          <MenuItem value="">{translate('res.common.all')}</MenuItem>
          {groups.map((g) => (
            <MenuItem key={g} value={g}>{g}</MenuItem>
          ))}
        </TextField>
        <Button type="submit" variant="contained">{translate('res.common.search')}</Button>
        <Button variant="outlined" startIcon={<AddIcon />} onClick={openCreate}>{translate('res.user.add')}</Button>
        <Box sx={{ flex: 1 }} />
        <IconButton onClick={() => refresh()}><RefreshIcon /></IconButton>
      </Box>
      <GwTable<Row> columns={columns} emptyText="res.user.empty" />
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
    </Box>
  );
};
