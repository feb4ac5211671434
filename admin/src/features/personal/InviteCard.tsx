import { useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useNotify, useTranslate } from 'react-admin';
import {
  Box,
  Button,
  Card,
  CardContent,
  CircularProgress,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  IconButton,
  InputAdornment,
  Stack,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import { api, errorText } from '../../lib/http';
import { useCopy } from '../../resources/shared/copy';
import { formatQuota } from '../../resources/shared/format';
import { apiQuery, asText, useDisplaySettings } from '../../resources/shared/hooks';
import { inviteLink, transferProblem } from './personalSettings';
import type { SelfUser } from './useSelf';

/** Invitation card: link (GET /api/user/aff), counters, and the transfer dialog (POST /api/user/aff_transfer). */
export function InviteCard({ self, onChanged }: { self: SelfUser | null; onChanged: () => void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const display = useDisplaySettings();
  const { copy, dialog } = useCopy();
  // A failed load leaves the link empty (and its copy button off).
  const { data: code = '' } = useQuery(apiQuery('affCode', '/api/user/aff', asText));
  const [open, setOpen] = useState(false);
  const [amount, setAmount] = useState('');
  const transferCall = useMutation({
    mutationFn: (quota: number) => api().post('/api/user/aff_transfer', { quota }),
    onSuccess: () => {
      notify('feat.personal.aff.transfer_ok', { type: 'success' });
      setOpen(false);
      onChanged();
    },
    onError: (err) => notify(errorText(err, translate), { type: 'error' }),
  });
  const busy = transferCall.isPending;

  const link = code ? inviteLink(window.location.origin, code) : '';
  const affQuota = Number(self?.aff_quota ?? 0);

  const openTransfer = () => {
    setAmount(String(Math.max(affQuota, 0)));
    setOpen(true);
  };

  const transfer = () => {
    const quota = Math.floor(Number(amount));
    const problem = transferProblem(quota, display.quotaPerUnit, affQuota);
    if (problem) {
      const values = problem.values?.amount !== undefined ? { amount: formatQuota(Number(problem.values.amount), display) } : undefined;
      notify(translate(problem.key, values), { type: 'error' });
      return;
    }
    transferCall.mutate(quota);
  };

  return (
    <Card variant="outlined" data-testid="personal-invite">
      <CardContent>
        <Typography variant="h6" sx={{ mb: 1.5 }}>
          {translate('feat.personal.aff.title')}
        </Typography>
        <TextField
          label={translate('feat.personal.aff.link')}
          value={link}
          size="small"
          fullWidth
          slotProps={{
            htmlInput: { readOnly: true, 'data-testid': 'personal-aff-link' },
            input: {
              endAdornment: (
                <InputAdornment position="end">
                  <Tooltip title={translate('feat.personal.aff.copy')}>
                    <span>
                      <IconButton size="small" edge="end" disabled={!link} onClick={() => void copy(link)} aria-label={translate('feat.personal.aff.copy')}>
                        <ContentCopyIcon fontSize="small" />
                      </IconButton>
                    </span>
                  </Tooltip>
                </InputAdornment>
              ),
            },
          }}
        />
        <Stack direction="row" sx={{ mt: 2, columnGap: 2, rowGap: 1, flexWrap: 'wrap' }}>
          <Box sx={{ flex: 1, minWidth: 80 }}>
            <Typography variant="caption" color="text.secondary">
              {translate('feat.personal.aff.count')}
            </Typography>
            <Typography variant="subtitle1" sx={{ fontWeight: 600 }}>
              {Number(self?.aff_count ?? 0)}
            </Typography>
          </Box>
          <Box sx={{ flex: 1, minWidth: 80 }}>
            <Typography variant="caption" color="text.secondary">
              {translate('feat.personal.aff.pending')}
            </Typography>
            <Typography variant="subtitle1" sx={{ fontWeight: 600 }} data-testid="personal-aff-quota">
              {formatQuota(affQuota, display)}
            </Typography>
          </Box>
          <Box sx={{ flex: 1, minWidth: 80 }}>
            <Typography variant="caption" color="text.secondary">
              {translate('feat.personal.aff.total')}
            </Typography>
            <Typography variant="subtitle1" sx={{ fontWeight: 600 }}>
              {formatQuota(self?.aff_history_quota ?? 0, display)}
            </Typography>
          </Box>
        </Stack>
        <Button variant="outlined" size="small" sx={{ mt: 1.5 }} onClick={openTransfer} data-testid="personal-aff-transfer">
          {translate('feat.personal.aff.transfer')}
        </Button>
      </CardContent>
      <Dialog open={open} onClose={() => !busy && setOpen(false)} maxWidth="xs" fullWidth>
        <DialogTitle>{translate('feat.personal.aff.transfer_title')}</DialogTitle>
        <DialogContent>
          <Typography variant="body2" sx={{ mb: 1 }}>
            {translate('feat.personal.aff.available', { amount: formatQuota(affQuota, display) })}
          </Typography>
          <TextField
            label={translate('feat.personal.aff.quota')}
            type="number"
            value={amount}
            onChange={(e) => setAmount(e.target.value)}
            size="small"
            fullWidth
            helperText={translate('feat.personal.aff.min', { amount: formatQuota(display.quotaPerUnit, display) })}
            slotProps={{ htmlInput: { min: display.quotaPerUnit, step: 1, 'data-testid': 'personal-aff-amount' } }}
            sx={{ mt: 1 }}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setOpen(false)} disabled={busy}>
            {translate('app.common.cancel')}
          </Button>
          <Button variant="contained" disableElevation onClick={transfer} disabled={busy} data-testid="personal-aff-confirm">
            {busy ? <CircularProgress size={18} color="inherit" /> : translate('app.common.confirm')}
          </Button>
        </DialogActions>
      </Dialog>
      {dialog}
    </Card>
  );
}
