import { Alert, Box, Button, Chip, Dialog, DialogActions, DialogContent, DialogTitle, Table, TableBody, TableCell, TableHead, TableRow } from '@mui/material';
import { useTranslate } from 'react-admin';
import type { BalanceSummary } from './balanceSummary';
import { useChannelTypes } from './useChannelTypes';
import { channelTypeLabel } from './channelTypes';

const COLOR = { updated: 'success', failed: 'error', unsupported: 'default' } as const;

/** What "update all balances" did, channel by channel (failures first, with the upstream's reason). */
export const BalanceSummaryDialog = ({ summary, onClose }: { summary: BalanceSummary | null; onClose: () => void }) => {
  const translate = useTranslate();
  const { catalogue } = useChannelTypes();
  if (!summary) return null;
  return (
    <Dialog open onClose={onClose} maxWidth="md" fullWidth>
      <DialogTitle>{translate('res.channel.balance_summary.title')}</DialogTitle>
      <DialogContent>
        <Alert severity={summary.failed ? 'warning' : 'success'} sx={{ mb: 2 }}>
          {translate('res.channel.balance_summary.counts', {
            total: summary.total,
            updated: summary.updated,
            failed: summary.failed,
            unsupported: summary.unsupported,
          })}
        </Alert>
        {summary.results.length ? (
          <Table size="small">
            <TableHead>
              <TableRow>
                <TableCell>ID</TableCell>
                <TableCell>{translate('res.channel.fields.name')}</TableCell>
                <TableCell>{translate('res.channel.fields.type')}</TableCell>
                <TableCell>{translate('res.channel.balance_summary.result')}</TableCell>
                <TableCell>{translate('res.channel.balance_summary.detail')}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {summary.results.map((r) => (
                <TableRow key={r.id} data-testid={`balance-row-${r.id}`}>
                  <TableCell>{r.id}</TableCell>
                  <TableCell>{r.name}</TableCell>
                  <TableCell>{channelTypeLabel(catalogue, r.type)}</TableCell>
                  <TableCell>
                    <Chip size="small" color={COLOR[r.status]} label={translate(`res.channel.balance_summary.${r.status}`)} />
                  </TableCell>
                  <TableCell sx={{ wordBreak: 'break-word' }}>{r.status === 'updated' ? `$${(r.balance ?? 0).toFixed(2)}` : (r.message ?? '')}</TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        ) : (
          <Box sx={{ color: 'text.secondary' }}>{translate('res.channel.balance_summary.none')}</Box>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('ra.action.close')}</Button>
      </DialogActions>
    </Dialog>
  );
};
