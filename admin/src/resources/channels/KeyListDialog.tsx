/** A multi-key channel's keys (masked) with their state; enable, disable or delete one, or all. */
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle, Stack, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import { Confirm, useRefresh, useTranslate } from 'react-admin';
import { useApi } from '../shared/api';
import { LOAD_ONCE, useNotifyError, useQueryError } from '../shared/hooks';
import { ColorTag } from '../shared/ColorTag';
import { formatTimestamp } from '../shared/format';
import { BreakerTag, type TargetHealthView } from './channelHealth';
import type { ChannelRow } from './useChannelOps';

interface KeyItem extends TargetHealthView {
  index: number;
  key: string;
  status: number;
  disabled_reason: string;
  disabled_time: number;
}

interface KeyList {
  channel_id: number;
  multi_key_mode: 'random' | 'polling';
  total: number;
  enabled: number;
  items: KeyItem[];
}

export const KeyListDialog = ({ row, onClose }: { row: ChannelRow | null; onClose: () => void }) => {
  const translate = useTranslate();
  const http = useApi();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const [deleting, setDeleting] = useState<number | null>(null);
  const queryClient = useQueryClient();
  const manage = (action: string, key_index?: number) =>
    http.post<KeyList>('/api/channel/multi_key/manage', { channel_id: row?.id, action, key_index }).then((r) => r.data);

  // Loaded once per opened channel: not again on the list's refresh after an action (the action
  // answers with the new list), and forgotten on closing so the next opening loads afresh.
  const queryKey = ['gateway', 'channelKeys', row?.id];
  const query = useQuery({
    queryKey,
    queryFn: () => manage('get_key_status'),
    enabled: (q) => !!row && q.state.dataUpdateCount + q.state.errorUpdateCount === 0,
    gcTime: 0,
    ...LOAD_ONCE,
  });
  useQueryError(query, notifyError);
  const list = query.data ?? null;
  const action = useMutation({
    mutationFn: ({ action, key_index }: { action: string; key_index?: number }) => manage(action, key_index),
    onSuccess: (data) => {
      queryClient.setQueryData(queryKey, data);
      refresh();
    },
    onError: (e) => notifyError(e),
  });
  const busy = query.isFetching || action.isPending;
  const act = (name: string, key_index?: number) => {
    if (row) action.mutate({ action: name, key_index });
  };

  return (
    <Dialog open={!!row} onClose={onClose} maxWidth="lg" fullWidth>
      <DialogTitle>{translate('res.channel.multi_key.title', { name: row?.name ?? '' })}</DialogTitle>
      <DialogContent>
        {list && (
          <Stack spacing={1}>
            <Typography variant="body2" data-testid="key-summary">
              {translate('res.channel.multi_key.summary', {
                total: list.total,
                enabled: list.enabled,
                mode: translate(`res.channel.multi_key.${list.multi_key_mode}`),
              })}
            </Typography>
            <Table size="small">
              <TableHead>
                <TableRow>
                  <TableCell>#</TableCell>
                  <TableCell>{translate('res.channel.fields.key')}</TableCell>
                  <TableCell>{translate('res.channel.fields.status')}</TableCell>
                  <TableCell>{translate('res.channel.health.breaker')}</TableCell>
                  <TableCell>{translate('res.channel.health.error_rate')}</TableCell>
                  <TableCell>{translate('res.channel.health.ttfb')}</TableCell>
                  <TableCell>{translate('res.channel.multi_key.last_used')}</TableCell>
                  <TableCell>{translate('res.channel.health.last_failure')}</TableCell>
                  <TableCell>{translate('res.common.actions')}</TableCell>
                </TableRow>
              </TableHead>
              <TableBody>
                {list.items.map((k) => (
                  <TableRow key={k.index} data-testid={`key-row-${k.index}`}>
                    <TableCell>{k.index}</TableCell>
                    <TableCell sx={{ fontFamily: 'monospace' }}>{k.key}</TableCell>
                    <TableCell>
                      <ColorTag
                        tone={k.status === 1 ? 'green' : 'red'}
                        label={translate(
                          k.status === 1
                            ? 'res.channel.status.enabled'
                            : k.status === 2
                              ? 'res.channel.status.manual_disabled'
                              : 'res.channel.status.auto_disabled',
                        )}
                      />
                      {k.disabled_reason && (
                        <Typography variant="caption" display="block" color="text.secondary">
                          {k.disabled_reason} {k.disabled_time ? formatTimestamp(k.disabled_time) : ''}
                        </Typography>
                      )}
                    </TableCell>
                    <TableCell>
                      <BreakerTag state={k.breaker} />
                    </TableCell>
                    <TableCell>{(k.error_rate * 100).toFixed(0)}%</TableCell>
                    <TableCell>{k.samples ? `${k.ttfb_ms} ms` : '-'}</TableCell>
                    <TableCell>{k.last_used ? formatTimestamp(k.last_used) : '-'}</TableCell>
                    <TableCell sx={{ maxWidth: 240, wordBreak: 'break-word' }}>{k.last_failure || '-'}</TableCell>
                    <TableCell>
                      <Stack direction="row" spacing={0.5}>
                        {k.status === 1 ? (
                          <Button size="small" color="warning" disabled={busy} onClick={() => act('disable_key', k.index)}>
                            {translate('res.common.disable')}
                          </Button>
                        ) : (
                          <Button size="small" color="success" disabled={busy} onClick={() => act('enable_key', k.index)}>
                            {translate('res.common.enable')}
                          </Button>
                        )}
                        <Button size="small" color="error" disabled={busy || list.total < 2} onClick={() => setDeleting(k.index)}>
                          {translate('res.common.delete')}
                        </Button>
                      </Stack>
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </Stack>
        )}
      </DialogContent>
      <DialogActions>
        <Button color="success" disabled={busy || !list} onClick={() => act('enable_all_keys')}>
          {translate('res.channel.enable_all')}
        </Button>
        <Button color="warning" disabled={busy || !list} onClick={() => act('disable_all_keys')}>
          {translate('res.channel.disable_all')}
        </Button>
        <Button onClick={onClose}>{translate('res.common.close')}</Button>
      </DialogActions>
      <Confirm
        isOpen={deleting !== null}
        title="res.common.delete"
        content={translate('res.channel.multi_key.confirm_delete', { n: deleting ?? 0 })}
        onConfirm={() => {
          const i = deleting;
          setDeleting(null);
          if (i !== null) act('delete_key', i);
        }}
        onClose={() => setDeleting(null)}
      />
    </Dialog>
  );
};
