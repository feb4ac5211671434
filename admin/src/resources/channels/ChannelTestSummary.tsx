import { useState } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import {
  Box,
  Button,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Typography,
} from '@mui/material';
import { useTranslate } from 'react-admin';
import { api } from '../../lib/http';
import { LOAD_ONCE } from '../shared/hooks';
import { summaryPoll, type Summary } from './testSummary';

/** The summary, or null when no sweep ran; an answer with success:false is a failed call. */
async function loadSummary(): Promise<Summary | null> {
  const r = await api().raw<Summary | null>('GET', '/api/channel/test/summary');
  if (!r.success) throw new Error(r.message);
  return r.data ?? null;
}

/**
 * The last "test all channels" sweep (GET /api/channel/test/summary): a chip with the counts that
 * opens the per-channel results, failures first. Polls while the sweep runs; `run` changes when a
 * new sweep is started from the toolbar.
 */
export function ChannelTestSummary({ run }: { run: number }) {
  const translate = useTranslate();
  const { data: summary } = useQuery({
    queryKey: ['channel', 'testSummary', run],
    queryFn: loadSummary,
    // A new sweep keeps the last summary shown until its own first answer.
    placeholderData: keepPreviousData,
    ...LOAD_ONCE,
    refetchInterval: (query) => summaryPoll(query.state, run),
  });
  const [open, setOpen] = useState(false);
  if (!summary) return null;
  const done = summary.succeeded + summary.failed;
  const label = summary.running
    ? translate('res.channel.test_summary.running', { done, total: summary.total })
    : translate('res.channel.test_summary.done', { ok: summary.succeeded, failed: summary.failed });
  const rows = [...summary.results].sort((a, b) => Number(a.success) - Number(b.success));
  return (
    <>
      <Chip
        data-testid="channel-test-summary"
        size="small"
        variant="outlined"
        color={summary.running ? 'info' : summary.failed ? 'warning' : 'success'}
        label={label}
        onClick={() => setOpen(true)}
      />
      <Dialog open={open} onClose={() => setOpen(false)} maxWidth="md" fullWidth>
        <DialogTitle>{translate('res.channel.test_summary.title')}</DialogTitle>
        <DialogContent dividers>
          <Typography variant="body2" sx={{ mb: 1 }}>
            {label} · {new Date(summary.started_at * 1000).toLocaleString()}
          </Typography>
          <Box sx={{ overflowX: 'auto' }}>
            <Table size="small">
              <TableHead>
                <TableRow>
                  <TableCell>ID</TableCell>
                  <TableCell>{translate('res.channel.test_summary.channel')}</TableCell>
                  <TableCell>{translate('res.channel.test_summary.result')}</TableCell>
                  <TableCell>{translate('res.channel.test_summary.message')}</TableCell>
                </TableRow>
              </TableHead>
              <TableBody>
                {rows.map((r) => (
                  <TableRow key={r.id}>
                    <TableCell>{r.id}</TableCell>
                    <TableCell>{r.name}</TableCell>
                    <TableCell>
                      <Chip
                        size="small"
                        color={r.success ? 'success' : 'error'}
                        label={translate(r.success ? 'res.channel.test_summary.ok' : 'res.channel.test_summary.fail')}
                      />
                    </TableCell>
                    <TableCell sx={{ wordBreak: 'break-word' }}>{r.success ? `${r.time.toFixed(2)} s` : r.message}</TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </Box>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setOpen(false)}>{translate('ra.action.close')}</Button>
        </DialogActions>
      </Dialog>
    </>
  );
}
