import { useEffect, useMemo, useState, type ReactNode } from 'react';
import {
  Box,
  Button,
  Checkbox,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  FormControlLabel,
  IconButton,
  List as MuiList,
  ListItemButton,
  ListItemText,
  Menu,
  MenuItem,
  Stack,
  Switch,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import AddIcon from '@mui/icons-material/Add';
import RefreshIcon from '@mui/icons-material/Refresh';
import SettingsIcon from '@mui/icons-material/ViewColumn';
import MoreVertIcon from '@mui/icons-material/MoreVert';
import PlayArrowIcon from '@mui/icons-material/PlayArrow';
import ArrowDropDownIcon from '@mui/icons-material/ArrowDropDown';
import EditIcon from '@mui/icons-material/Edit';
import {
  Confirm,
  List,
  ListContextProvider,
  useListContext,
  useNotify,
  useRefresh,
  useTranslate,
  type Identifier,
  type RaRecord,
} from 'react-admin';
import { ColorTag } from '../shared/ColorTag';
import { GwTable, type Column } from '../shared/GwTable';
import { GwPagination } from '../shared/GwPagination';
import { FILTER_BAR_SX, LIST_SX } from '../shared/styles';
import { readPageSize } from '../shared/pageSize';
import { useLocalState } from '../shared/storage';
import { useCopy } from '../shared/copy';
import { useDisplaySettings, useNotifyError, useRouteDrawer } from '../shared/hooks';
import { formatQuota, formatTimestamp, parseJsonObject, responseTimeColor, splitComma, stringColor } from '../shared/format';
import { errorText, useGateway } from '../shared/api';
import { channelTypeColor, channelTypeLabel } from './channelTypes';
import { parsePriority, parseWeight } from './channelForm';
import { groupByTag, isTagRow, validateTagPriority, validateTagWeight, type TagRow } from './channelTags';
import { ChannelEditDrawer } from './ChannelEdit';
import { useChannelTypes } from './useChannelTypes';
import { TagEditDrawer } from './TagEdit';

type Row = RaRecord & Record<string, any>;

const COLUMN_KEYS = ['id', 'name', 'group', 'type', 'status', 'response_time', 'balance', 'priority', 'weight', 'actions'] as const;

export const ChannelList = () => {
  const [idSort, setIdSort] = useLocalState<boolean>('channel-id-sort', false);
  const [tagMode, setTagMode] = useLocalState<boolean>('channel-tag-mode', false);
  const drawer = useRouteDrawer('channel');
  return (
    <>
      <List
        resource="channel"
        perPage={readPageSize('channel')}
        filter={{ id_sort: idSort, tag_mode: tagMode }}
        actions={false}
        pagination={<GwPagination />}
        empty={false}
        exporter={false}
        title="res.channel.title"
        storeKey={false} sx={LIST_SX}
        disableSyncWithLocation
      >
        <ChannelListBody idSort={idSort} setIdSort={setIdSort} tagMode={tagMode} setTagMode={setTagMode} openCreate={drawer.openCreate} openEdit={drawer.openEdit} />
      </List>
      <ChannelEditDrawer creating={drawer.creating} editId={drawer.editId} onClose={drawer.close} />
    </>
  );
};

interface BodyProps {
  idSort: boolean;
  setIdSort: (v: boolean) => void;
  tagMode: boolean;
  setTagMode: (v: boolean) => void;
  openCreate: () => void;
  openEdit: (id: Identifier) => void;
}

const ChannelListBody = ({ idSort, setIdSort, tagMode, setTagMode, openCreate, openEdit }: BodyProps) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const dp = useGateway();
  const display = useDisplaySettings();
  const { data, selectedIds, onUnselectItems, filterValues, setFilters } = useListContext<Row>();
  const [hidden, setHidden] = useLocalState<string[]>('channel-hidden-columns', []);
  const [columnsOpen, setColumnsOpen] = useState(false);
  const [batchTagOpen, setBatchTagOpen] = useState(false);
  const [confirm, setConfirm] = useState<null | { title: string; content: string; action: () => Promise<void> }>(null);
  const [testPicker, setTestPicker] = useState<Row | null>(null);
  const [tagEdit, setTagEdit] = useState<TagRow | null>(null);
  const [menu, setMenu] = useState<{ anchor: HTMLElement; row: Row } | null>(null);
  const [keyword, setKeyword] = useState<string>(String(filterValues.keyword ?? ''));
  const [group, setGroup] = useState<string>(String(filterValues.group ?? ''));
  const [model, setModel] = useState<string>(String(filterValues.model ?? ''));
  const [groups, setGroups] = useState<string[]>([]);
  const { copy, dialog: copyDialog } = useCopy();
  // Until the catalogue answers, the type column shows `#id`.
  const { catalogue } = useChannelTypes();

  useEffect(() => {
    dp.getGroups()
      .then((r) => setGroups(r.data))
      .catch(() => undefined);
  }, [dp]);

  const rows = useMemo(() => (tagMode ? (groupByTag(data ?? []) as Row[]) : data ?? []), [data, tagMode]);

  const search = () => setFilters({ ...filterValues, keyword: keyword.trim() || undefined, group: group || undefined, model: model.trim() || undefined }, {});

  const run = async (fn: () => Promise<unknown>, okKey?: string, params?: Record<string, unknown>) => {
    try {
      await fn();
      if (okKey) notify(okKey, { type: 'success', messageArgs: params });
      refresh();
    } catch (e) {
      notifyError(e);
    }
  };

  const testChannel = async (row: Row, model?: string) => {
    try {
      const r = await dp.testChannel(row.id, model);
      notify('res.channel.msg.test_ok', { type: 'success', messageArgs: { name: row.name, time: (r.time ?? 0).toFixed(2) } });
      refresh();
    } catch (e) {
      notifyError(e);
      refresh();
    }
  };

  const setStatus = (row: Row, status: number) =>
    run(() => dp.update('channel', { id: row.id, data: { status }, previousData: row }), 'res.common.op_success');

  const saveNumber = async (row: Row, field: 'priority' | 'weight', text: string) => {
    if (isTagRow(row)) {
      const err = field === 'priority' ? validateTagPriority(text) : validateTagWeight(text);
      if (err) return notify(err, { type: 'warning' });
      const value = parseInt(text, 10);
      if (value === row[field]) return;
      return run(() => dp.editTag({ tag: row.tag, [field]: value }), 'res.common.op_success');
    }
    const value = field === 'priority' ? parsePriority(text) : parseWeight(text);
    if (value === Number(row[field] ?? 0)) return;
    return run(() => dp.update('channel', { id: row.id, data: { [field]: value }, previousData: row }), 'res.common.op_success');
  };

  const updateBalance = (row: Row) =>
    run(async () => {
      const r = await dp.updateChannelBalance(row.id);
      notify('res.channel.msg.balance_updated', { type: 'success', messageArgs: { name: row.name, balance: r.balance.toFixed(2) } });
    });

  const statusCell = (row: Row) => {
    const s = Number(row.status);
    if (isTagRow(row)) {
      return <ColorTag tone={s === 1 ? 'green' : 'red'} label={translate(s === 1 ? 'res.channel.status.tag_enabled' : 'res.channel.status.tag_disabled')} />;
    }
    if (s === 1) return <ColorTag tone="green" label={translate('res.channel.status.enabled')} />;
    if (s === 2) return <ColorTag tone="red" label={translate('res.channel.status.manual_disabled')} />;
    if (s === 3) {
      const info = parseJsonObject(row.other_info);
      const title = (
        <Box>
          <div>
            {translate('res.channel.status.reason')}: {String(info.status_reason ?? '-')}
          </div>
          <div>
            {translate('res.channel.status.time')}: {formatTimestamp(Number(info.status_time ?? 0))}
          </div>
        </Box>
      );
      return (
        <Tooltip title={title}>
          <span>
            <ColorTag tone="yellow" label={translate('res.channel.status.auto_disabled')} />
          </span>
        </Tooltip>
      );
    }
    return <ColorTag tone="grey" label={translate('res.common.unknown')} />;
  };

  const responseCell = (row: Row) => {
    const rt = Number(row.response_time ?? 0);
    const label = rt ? translate('res.channel.seconds', { s: (rt / 1000).toFixed(2) }) : translate('res.channel.untested');
    const tag = <ColorTag tone={responseTimeColor(rt)} label={label} />;
    if (isTagRow(row)) return tag;
    return <Tooltip title={row.test_time ? `${translate('res.channel.fields.test_time')}: ${formatTimestamp(row.test_time)}` : ''}>{tag}</Tooltip>;
  };

  const columns: Column<Row>[] = [
    { key: 'id', label: 'res.channel.fields.id', render: (r) => (isTagRow(r) ? '' : r.id), width: 60 },
    {
      key: 'name',
      label: 'res.channel.fields.name',
      render: (r) =>
        isTagRow(r) ? (
          <Stack direction="row" spacing={1} alignItems="center">
            <ColorTag tone="indigo" label={translate('res.channel.tag_label', { tag: r.tag })} />
            <Typography variant="caption" color="text.secondary">
              {translate('res.channel.tag_count', { n: r.children.length })}
            </Typography>
          </Stack>
        ) : (
          <Stack direction="row" spacing={1} alignItems="center">
            <span>{r.name}</span>
            {!tagMode && r.tag ? <ColorTag tone={stringColor(r.tag)} variant="outlined" label={r.tag} /> : null}
          </Stack>
        ),
    },
    {
      key: 'group',
      label: 'res.channel.fields.group',
      render: (r) => (
        <Stack direction="row" spacing={0.5} sx={{ flexWrap: 'wrap', gap: 0.5, maxWidth: 220 }}>
          {splitComma(r.group).map((g) => (
            <ColorTag key={g} tone={stringColor(g)} label={g} />
          ))}
        </Stack>
      ),
    },
    {
      key: 'type',
      label: 'res.channel.fields.type',
      render: (r) => (isTagRow(r) ? null : <ColorTag tone={channelTypeColor(catalogue, Number(r.type))} label={channelTypeLabel(catalogue, Number(r.type))} />),
    },
    { key: 'status', label: 'res.channel.fields.status', render: statusCell },
    { key: 'response_time', label: 'res.channel.fields.response_time', render: responseCell },
    {
      key: 'balance',
      label: 'res.channel.fields.balance',
      render: (r) =>
        isTagRow(r) ? (
          <Tooltip title={translate('res.channel.fields.used_quota')}>
            <span>
              <ColorTag tone="white" label={formatQuota(r.used_quota, display)} />
            </span>
          </Tooltip>
        ) : (
          <Stack direction="row" spacing={0.5}>
            <Tooltip title={translate('res.channel.fields.used_quota')}>
              <span>
                <ColorTag tone="white" label={formatQuota(r.used_quota, display)} />
              </span>
            </Tooltip>
            <Tooltip title={translate('res.channel.click_balance')}>
              <span>
                <ColorTag tone="grey" clickable onClick={() => updateBalance(r)} label={`$${Number(r.balance ?? 0).toFixed(2)}`} />
              </span>
            </Tooltip>
          </Stack>
        ),
    },
    {
      key: 'priority',
      label: 'res.channel.fields.priority',
      render: (r) => <InlineNumber key={`${r.id}-p-${r.priority}`} value={r.priority ?? 0} min={-999} onSave={(v) => saveNumber(r, 'priority', v)} />,
    },
    {
      key: 'weight',
      label: 'res.channel.fields.weight',
      render: (r) => <InlineNumber key={`${r.id}-w-${r.weight}`} value={r.weight ?? 0} min={0} onSave={(v) => saveNumber(r, 'weight', v)} />,
    },
    {
      key: 'actions',
      label: 'res.common.actions',
      fixed: true,
      render: (r) =>
        isTagRow(r) ? (
          <Stack direction="row" spacing={0.5}>
            <Button size="small" color="success" onClick={() => run(() => dp.enableTag(r.tag), 'res.common.op_success')}>
              {translate('res.channel.enable_all')}
            </Button>
            <Button size="small" color="warning" onClick={() => run(() => dp.disableTag(r.tag), 'res.common.op_success')}>
              {translate('res.channel.disable_all')}
            </Button>
            <Button size="small" startIcon={<EditIcon fontSize="small" />} onClick={() => setTagEdit(r)}>
              {translate('res.common.edit')}
            </Button>
          </Stack>
        ) : (
          <Stack direction="row" spacing={0.5} alignItems="center">
            <Box sx={{ display: 'inline-flex' }}>
              <Button size="small" variant="outlined" startIcon={<PlayArrowIcon fontSize="small" />} onClick={() => testChannel(r)} sx={{ borderTopRightRadius: 0, borderBottomRightRadius: 0, minWidth: 0 }}>
                {translate('res.channel.test')}
              </Button>
              <Button size="small" variant="outlined" onClick={() => setTestPicker(r)} sx={{ borderTopLeftRadius: 0, borderBottomLeftRadius: 0, minWidth: 0, px: 0.5, ml: '-1px' }} aria-label={translate('res.channel.pick_model')}>
                <ArrowDropDownIcon fontSize="small" />
              </Button>
            </Box>
            {Number(r.status) === 1 ? (
              <Button size="small" color="warning" onClick={() => setStatus(r, 2)}>
                {translate('res.common.disable')}
              </Button>
            ) : (
              <Button size="small" color="success" onClick={() => setStatus(r, 1)}>
                {translate('res.common.enable')}
              </Button>
            )}
            <Tooltip title={translate('res.common.edit')}>
              <IconButton size="small" color="primary" onClick={() => openEdit(r.id)}>
                <EditIcon fontSize="small" />
              </IconButton>
            </Tooltip>
            <IconButton size="small" onClick={(e) => setMenu({ anchor: e.currentTarget, row: r })} aria-label="more">
              <MoreVertIcon fontSize="small" />
            </IconButton>
          </Stack>
        ),
    },
  ];

  const selectedCount = selectedIds.length;

  return (
    <Box>
      <Box sx={{ p: 2, display: 'flex', flexWrap: 'wrap', gap: 1, alignItems: 'center' }}>
        <Button variant="contained" startIcon={<AddIcon />} onClick={openCreate}>
          {translate('res.channel.add')}
        </Button>
        <Button variant="outlined" onClick={() => setConfirm({ title: 'res.channel.test_all', content: 'res.channel.confirm.test_all', action: async () => { const r = await dp.testAllChannels(); notify(r.message || 'res.common.op_success', { type: 'info' }); } })}>
          {translate('res.channel.test_all')}
        </Button>
        <Button variant="outlined" onClick={() => setConfirm({ title: 'res.channel.update_all_balance', content: 'res.channel.confirm.update_all_balance', action: async () => { const r = await dp.updateAllBalances(); notify(r.message || 'res.common.op_success', { type: 'info' }); } })}>
          {translate('res.channel.update_all_balance')}
        </Button>
        <Button variant="outlined" color="error" onClick={() => setConfirm({ title: 'res.channel.delete_disabled', content: 'res.channel.confirm.delete_disabled', action: async () => { const r = await dp.deleteDisabledChannels(); notify('res.channel.msg.deleted_count', { type: 'success', messageArgs: { count: r.count } }); } })}>
          {translate('res.channel.delete_disabled')}
        </Button>
        <Button
          variant="outlined"
          color="error"
          disabled={selectedCount === 0}
          onClick={() => {
            if (!selectedCount) return notify('res.channel.msg.select_to_delete', { type: 'warning' });
            setConfirm({
              title: 'res.channel.batch_delete',
              content: 'res.channel.confirm.batch_delete',
              action: async () => {
                await dp.deleteMany('channel', { ids: selectedIds });
                notify('res.channel.msg.deleted_count', { type: 'success', messageArgs: { count: selectedCount } });
                onUnselectItems();
              },
            });
          }}
        >
          {translate('res.channel.batch_delete')} {selectedCount ? `(${selectedCount})` : ''}
        </Button>
        <Button variant="outlined" onClick={() => (selectedCount ? setBatchTagOpen(true) : notify('res.channel.msg.select_for_tag', { type: 'warning' }))}>
          {translate('res.channel.batch_tag')}
        </Button>
        <Box sx={{ flex: 1 }} />
        <FormControlLabel control={<Switch size="small" checked={idSort} onChange={(e) => setIdSort(e.target.checked)} />} label={translate('res.channel.id_sort')} />
        <FormControlLabel control={<Switch size="small" checked={tagMode} onChange={(e) => { setTagMode(e.target.checked); onUnselectItems(); }} />} label={translate('res.channel.tag_mode')} />
        <Tooltip title={translate('res.common.columns')}>
          <IconButton onClick={() => setColumnsOpen(true)}>
            <SettingsIcon />
          </IconButton>
        </Tooltip>
        <Tooltip title={translate('res.common.refresh')}>
          <IconButton onClick={() => refresh()}>
            <RefreshIcon />
          </IconButton>
        </Tooltip>
      </Box>
      <Box component="form" noValidate onSubmit={(e) => { e.preventDefault(); search(); }} sx={{ ...FILTER_BAR_SX, px: 2, pb: 2, display: 'flex', flexWrap: 'wrap', gap: 1 }}>
        <TextField size="small" label={translate('res.channel.search_keyword')} value={keyword} onChange={(e) => setKeyword(e.target.value)} sx={{ minWidth: 260 }} />
        <TextField size="small" label={translate('res.channel.search_model')} value={model} onChange={(e) => setModel(e.target.value)} />
        <TextField select size="small" label={translate('res.channel.fields.group')} value={group} onChange={(e) => setGroup(e.target.value)} sx={{ minWidth: 140 }} slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}>
          <MenuItem value="">{translate('res.common.all')}</MenuItem>
          {groups.map((g) => (
            <MenuItem key={g} value={g}>
              {g}
            </MenuItem>
          ))}
        </TextField>
        <Button type="submit" variant="contained" color="primary">
          {translate('res.common.search')}
        </Button>
        <Button onClick={() => { setKeyword(''); setGroup(''); setModel(''); setFilters({}, {}); }}>{translate('res.common.reset')}</Button>
      </Box>
      <TableOverride rows={rows}>
        <GwTable<Row>
          columns={columns.filter((c) => c.fixed || !hidden.includes(c.key))}
          selectable
          childrenOf={(r) => (isTagRow(r) ? (r.children as Row[]) : undefined)}
          canSelect={(r) => !isTagRow(r)}
          emptyText="res.channel.empty"
        />
      </TableOverride>

      <Menu anchorEl={menu?.anchor} open={!!menu} onClose={() => setMenu(null)}>
        <MenuItem
          onClick={() => {
            const row = menu!.row;
            setMenu(null);
            (async () => {
              try {
                // Copied on the server: an admin only sees the masked key, so it cannot be copied by reading it.
                await dp.copyChannel(row.id);
                notify('res.channel.msg.copied', { type: 'success' });
                refresh();
              } catch (e) {
                notify(`${translate('res.channel.msg.copy_failed')}: ${errorText(e, translate)}`, { type: 'error' });
              }
            })();
          }}
        >
          {translate('res.channel.copy')}
        </MenuItem>
        <MenuItem
          onClick={() => {
            const row = menu!.row;
            setMenu(null);
            copy(String(row.id));
          }}
        >
          {translate('res.channel.copy_id')}
        </MenuItem>
        <MenuItem
          sx={{ color: 'error.main' }}
          onClick={() => {
            const row = menu!.row;
            setMenu(null);
            setConfirm({
              title: 'res.common.delete',
              content: 'res.channel.confirm.delete',
              action: async () => {
                await dp.delete('channel', { id: row.id, previousData: row });
                notify('res.common.deleted', { type: 'success' });
              },
            });
          }}
        >
          {translate('res.common.delete')}
        </MenuItem>
      </Menu>

      <Confirm
        isOpen={!!confirm}
        title={confirm?.title ?? ''}
        content={confirm?.content ?? ''}
        onClose={() => setConfirm(null)}
        onConfirm={async () => {
          const c = confirm;
          setConfirm(null);
          if (c) await run(c.action);
        }}
      />

      <ColumnSettings
        open={columnsOpen}
        onClose={() => setColumnsOpen(false)}
        hidden={hidden}
        setHidden={setHidden}
      />

      <TestModelDialog row={testPicker} onClose={() => setTestPicker(null)} onPick={(row, m) => { setTestPicker(null); testChannel(row, m); }} />

      <BatchTagDialog
        open={batchTagOpen}
        onClose={() => setBatchTagOpen(false)}
        onSubmit={async (tag) => {
          if (!selectedIds.length) return notify('res.channel.msg.select_for_tag', { type: 'warning' });
          if (!tag.trim()) return notify('res.channel.msg.tag_required', { type: 'warning' });
          try {
            const r = await dp.batchSetTag(selectedIds, tag.trim());
            notify('res.channel.msg.tag_set_count', { type: 'success', messageArgs: { count: r.count } });
            setBatchTagOpen(false);
            onUnselectItems();
            refresh();
          } catch (e) {
            notifyError(e);
          }
        }}
      />
      <TagEditDrawer row={tagEdit} groupsOptions={groups} onClose={() => setTagEdit(null)} onSaved={() => { setTagEdit(null); refresh(); }} />
      {copyDialog}
    </Box>
  );
};

/** Re-provides the list context with the tag-grouped rows (data replaced, everything else kept). */
const TableOverride = ({ rows, children }: { rows: Row[]; children: ReactNode }) => {
  const ctx = useListContext<Row>();
  return <ListDataOverride value={{ ...ctx, data: rows }}>{children}</ListDataOverride>;
};

const ListDataOverride = ({ value, children }: { value: any; children: ReactNode }) => <ListContextProvider value={value}>{children}</ListContextProvider>;

/** A small integer input that saves on blur or Enter. */
const InlineNumber = ({ value, onSave, min }: { value: number; onSave: (v: string) => void; min?: number }) => {
  const [text, setText] = useState(String(value));
  return (
    <TextField
      size="small"
      variant="outlined"
      type="number"
      value={text}
      onChange={(e) => setText(e.target.value)}
      onBlur={() => text !== String(value) && onSave(text)}
      onKeyDown={(e) => {
        if (e.key === 'Enter') (e.target as HTMLInputElement).blur();
      }}
      slotProps={{ htmlInput: { min, step: 1, style: { width: 44, padding: '4px 6px' } } }}
    />
  );
};

const ColumnSettings = ({ open, onClose, hidden, setHidden }: { open: boolean; onClose: () => void; hidden: string[]; setHidden: (v: string[]) => void }) => {
  const translate = useTranslate();
  return (
    <Dialog open={open} onClose={onClose}>
      <DialogTitle>{translate('res.common.columns')}</DialogTitle>
      <DialogContent>
        <Stack>
          {COLUMN_KEYS.filter((k) => k !== 'actions').map((k) => (
            <FormControlLabel
              key={k}
              control={
                <Checkbox
                  checked={!hidden.includes(k)}
                  onChange={(e) => setHidden(e.target.checked ? hidden.filter((h) => h !== k) : [...hidden, k])}
                />
              }
              label={translate(k === 'id' ? 'res.channel.fields.id' : `res.channel.fields.${k}`)}
            />
          ))}
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={() => setHidden([])}>{translate('res.common.reset')}</Button>
        <Button onClick={onClose} variant="contained">
          {translate('res.common.close')}
        </Button>
      </DialogActions>
    </Dialog>
  );
};

const TestModelDialog = ({ row, onClose, onPick }: { row: Row | null; onClose: () => void; onPick: (row: Row, model: string) => void }) => {
  const translate = useTranslate();
  const [q, setQ] = useState('');
  const models = row ? splitComma(row.models) : [];
  const shown = models.filter((m) => m.toLowerCase().includes(q.toLowerCase()));
  return (
    <Dialog open={!!row} onClose={onClose} fullWidth maxWidth="sm">
      <DialogTitle>{translate('res.channel.pick_model_title', { name: row?.name ?? '' })}</DialogTitle>
      <DialogContent>
        <TextField fullWidth size="small" placeholder={translate('res.channel.search_model')} value={q} onChange={(e) => setQ(e.target.value)} sx={{ mt: 1 }} />
        <MuiList dense sx={{ maxHeight: 360, overflowY: 'auto' }}>
          {shown.map((m) => (
            <ListItemButton key={m} onClick={() => row && onPick(row, m)}>
              <ListItemText primary={m} secondary={m === row?.test_model ? translate('res.channel.fields.test_model') : undefined} />
              <PlayArrowIcon fontSize="small" color="action" />
            </ListItemButton>
          ))}
          {shown.length === 0 && (
            <Typography color="text.secondary" sx={{ p: 2 }}>
              {translate('res.common.empty')}
            </Typography>
          )}
        </MuiList>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('res.common.cancel')}</Button>
      </DialogActions>
    </Dialog>
  );
};

const BatchTagDialog = ({ open, onClose, onSubmit }: { open: boolean; onClose: () => void; onSubmit: (tag: string) => void }) => {
  const translate = useTranslate();
  const { selectedIds } = useListContext();
  const [tag, setTag] = useState('');
  return (
    <Dialog open={open} onClose={onClose} fullWidth maxWidth="xs">
      <DialogTitle>{translate('res.channel.batch_tag')}</DialogTitle>
      <DialogContent>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
          {translate('res.channel.batch_tag_hint', { n: selectedIds.length })}
        </Typography>
        <TextField autoFocus fullWidth size="small" label={translate('res.channel.fields.tag')} value={tag} onChange={(e) => setTag(e.target.value)} />
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('res.common.cancel')}</Button>
        <Button variant="contained" onClick={() => onSubmit(tag)}>
          {translate('res.common.confirm')}
        </Button>
      </DialogActions>
    </Dialog>
  );
};
