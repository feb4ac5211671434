import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { Title, useNotify, useTranslate } from 'react-admin';
import {
  Alert,
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
  Stack,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  TextField,
  Tooltip,
  Typography,
  alpha,
  useTheme,
} from '@mui/material';
import Grid from '@mui/material/Grid';
import RefreshIcon from '@mui/icons-material/Refresh';
import RedeemIcon from '@mui/icons-material/RedeemOutlined';
import PaymentsIcon from '@mui/icons-material/PaymentsOutlined';
import OpenInNewIcon from '@mui/icons-material/OpenInNew';
import AccountBalanceWalletIcon from '@mui/icons-material/AccountBalanceWalletOutlined';
import { api, errorText } from '../../lib/http';
import { useStatus } from '../../lib/StatusContext';
import { formatQuota, formatTimestamp } from '../../resources/shared/format';
import { apiQuery, LOAD_ONCE, useDebounced, useDisplaySettings } from '../../resources/shared/hooks';
import { useSelf } from '../personal/useSelf';
import { useGateway } from '../../resources/shared/api';
import { ColorTag } from '../../resources/shared/ColorTag';
import {
  minTopup,
  normaliseAmount,
  orderStatusTone,
  payFields,
  payProblem,
  redeemProblem,
  safePayUrl,
  submitPayForm,
  topupLink,
  yuanText,
  type PaymentMethod,
} from './topupAmounts';

interface TopupRow {
  /** 'order' (online payment) or 'redemption' (a redeemed code); older servers send orders only, without it. */
  kind?: 'order' | 'redemption';
  quota?: number;
  id: number;
  amount: number;
  money: number;
  trade_no: string;
  payment_method: string;
  create_time: number;
  status: string;
}

/** Wallet page: balance, redeem by code, online top-up (zfb / wx), top-up link, records. */
export function TopupPage() {
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const display = useDisplaySettings();
  const theme = useTheme();
  const dp = useGateway();

  const { self, loading: loadingSelf, reload: loadSelf } = useSelf();
  const [code, setCode] = useState('');
  const min = minTopup(status);
  const [amount, setAmount] = useState<number>(() => Math.max(1, Math.ceil(min)));
  const [confirm, setConfirm] = useState<PaymentMethod | null>(null);

  const fail = useCallback((err: unknown) => notify(errorText(err, translate), { type: 'error' }), [notify, translate]);

  // A failed load shows no records.
  const recordsQuery = useQuery(apiQuery('topupRecords', '/api/user/topup/self', (d: unknown) => (Array.isArray(d) ? (d as TopupRow[]) : [])));
  const records = recordsQuery.isError ? [] : (recordsQuery.data ?? []);
  const { refetch: refetchRecords } = recordsQuery;

  // Keep the typed amount at or above the site's minimum once the status is known.
  useEffect(() => {
    setAmount((a) => (a < min ? Math.max(1, Math.ceil(min)) : a));
  }, [min]);

  // Live price preview (yuan) from POST /api/user/amount, 300 ms after the amount settles; only when
  // online top-up is on. The last price stays until the next one answers; none below the minimum.
  const priced = useDebounced(amount, 300);
  const priceOn = !!status.enable_online_topup && amount >= min;
  const priceQuery = useQuery({
    queryKey: ['gateway', 'topupPrice', priced],
    queryFn: () =>
      api()
        .raw<string | number>('POST', '/api/user/amount', { amount: priced, top_up_code: '' })
        .then((r) => (r.success ? yuanText(r.data) : null)),
    enabled: priceOn && priced >= min,
    placeholderData: keepPreviousData,
    ...LOAD_ONCE,
  });
  const price = priceOn && !priceQuery.isError ? (priceQuery.data ?? null) : null;

  // Redeeming goes through the data provider's redeem (POST /api/user/topup).
  const redeemCall = useMutation({
    mutationFn: (key: string) => dp.redeem(key),
    onSuccess: async ({ quota: added }) => {
      notify(added > 0 ? translate('feat.topup.redeem_added', { amount: formatQuota(added, display) }) : translate('feat.topup.redeem_ok'), {
        type: 'success',
      });
      setCode('');
      await Promise.all([loadSelf(), refetchRecords()]);
    },
    onError: fail,
  });
  const redeeming = redeemCall.isPending;
  const redeem = (e?: FormEvent) => {
    e?.preventDefault();
    const problem = redeemProblem(code);
    if (problem) {
      notify(problem.key, { type: 'warning' });
      return;
    }
    redeemCall.mutate(code.trim());
  };

  const openLink = () => {
    const link = topupLink(status);
    if ('key' in link) {
      notify(link.key, { type: 'error' });
      return;
    }
    window.open(link.url, '_blank', 'noopener');
  };

  const startPay = (method: PaymentMethod) => {
    const problem = payProblem(status, amount);
    if (problem) {
      notify(translate(problem.key, problem.values), { type: 'error' });
      return;
    }
    setConfirm(method);
  };

  const payCall = useMutation({
    mutationFn: (p: { amount: number; method: PaymentMethod }) =>
      api().raw<Record<string, unknown>>('POST', '/api/user/pay', { amount: p.amount, top_up_code: '', payment_method: p.method }),
    onSuccess: (r) => {
      if (!r.success) {
        notify(r.message || translate('feat.topup.request_failed'), { type: 'error' });
        return;
      }
      const url = safePayUrl(r.url);
      if (!url) {
        notify('feat.topup.request_failed', { type: 'error' });
        return;
      }
      notify('feat.topup.paying', { type: 'info' });
      submitPayForm(url, payFields(r.data));
      setConfirm(null);
      void refetchRecords();
    },
    onError: fail,
  });
  const paying = payCall.isPending;
  const pay = () => {
    if (confirm) payCall.mutate({ amount, method: confirm });
  };

  const online = !!status.enable_online_topup;
  const accent = theme.palette.primary.main;

  return (
    <Box sx={{ maxWidth: 1100, mx: 'auto', width: '100%' }} data-testid="topup-page">
      <Title title={translate('feat.topup.title')} />
      <Card
        variant="outlined"
        sx={{
          mb: 2,
          background: `linear-gradient(135deg, ${alpha(accent, theme.palette.mode === 'dark' ? 0.35 : 0.9)} 0%, ${alpha(theme.palette.secondary.main, theme.palette.mode === 'dark' ? 0.25 : 0.85)} 100%)`,
          color: '#fff',
          border: 'none',
        }}
      >
        <CardContent sx={{ display: 'flex', alignItems: 'center', gap: 2, flexWrap: 'wrap' }}>
          <AccountBalanceWalletIcon sx={{ fontSize: 44, opacity: 0.9 }} />
          <Box sx={{ flex: 1, minWidth: 160 }}>
            <Typography variant="body2" sx={{ opacity: 0.85 }}>
              {translate('feat.topup.balance')}
            </Typography>
            <Typography variant="h4" sx={{ fontWeight: 600 }} data-testid="topup-balance">
              {formatQuota(self?.quota ?? 0, display)}
            </Typography>
          </Box>
          <Stack direction="row" spacing={3} sx={{ mr: 1 }}>
            <Box>
              <Typography variant="caption" sx={{ opacity: 0.85 }}>
                {translate('feat.topup.used')}
              </Typography>
              <Typography variant="subtitle1" sx={{ fontWeight: 600 }}>
                {formatQuota(self?.used_quota ?? 0, display)}
              </Typography>
            </Box>
            <Box>
              <Typography variant="caption" sx={{ opacity: 0.85 }}>
                {translate('feat.topup.requests')}
              </Typography>
              <Typography variant="subtitle1" sx={{ fontWeight: 600 }}>
                {Number(self?.request_count ?? 0)}
              </Typography>
            </Box>
          </Stack>
          <Tooltip title={translate('feat.topup.refresh')}>
            <span>
              <IconButton
                onClick={() => void loadSelf()}
                disabled={loadingSelf}
                sx={{ color: 'inherit' }}
                aria-label={translate('feat.topup.refresh')}
                data-testid="topup-refresh"
              >
                {loadingSelf ? <CircularProgress size={22} color="inherit" /> : <RefreshIcon />}
              </IconButton>
            </span>
          </Tooltip>
        </CardContent>
      </Card>

      <Grid container spacing={2}>
        <Grid size={{ xs: 12, md: 6 }}>
          <Card variant="outlined" sx={{ height: '100%' }}>
            <CardContent>
              <Stack direction="row" spacing={1} sx={{ alignItems: 'center', mb: 0.5 }}>
                <RedeemIcon color="primary" />
                <Typography variant="h6">{translate('feat.topup.redeem_title')}</Typography>
              </Stack>
              <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
                {translate('feat.topup.redeem_hint')}
              </Typography>
              <Box component="form" onSubmit={redeem} noValidate>
                <TextField
                  label={translate('feat.topup.code')}
                  placeholder={translate('feat.topup.code_placeholder')}
                  value={code}
                  onChange={(e) => setCode(e.target.value)}
                  size="small"
                  fullWidth
                  name="redemption-code"
                  slotProps={{ htmlInput: { 'data-testid': 'redeem-code', maxLength: 64 } }}
                />
                <Stack direction="row" spacing={1} sx={{ mt: 2, flexWrap: 'wrap', rowGap: 1 }}>
                  <Button
                    type="submit"
                    variant="contained"
                    disableElevation
                    disabled={redeeming}
                    data-testid="redeem-submit"
                    startIcon={redeeming ? <CircularProgress size={16} color="inherit" /> : <RedeemIcon />}
                  >
                    {translate('feat.topup.redeem')}
                  </Button>
                  <Button variant="outlined" onClick={openLink} endIcon={<OpenInNewIcon />} data-testid="topup-link">
                    {translate('feat.topup.buy_link')}
                  </Button>
                </Stack>
              </Box>
            </CardContent>
          </Card>
        </Grid>
        <Grid size={{ xs: 12, md: 6 }}>
          <Card variant="outlined" sx={{ height: '100%' }}>
            <CardContent>
              <Stack direction="row" spacing={1} sx={{ alignItems: 'center', mb: 0.5 }}>
                <PaymentsIcon color="primary" />
                <Typography variant="h6">{translate('feat.topup.online_title')}</Typography>
              </Stack>
              <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
                {online ? translate('feat.topup.online_hint') : translate('feat.topup.online_disabled')}
              </Typography>
              <TextField
                label={translate(display.displayInCurrency ? 'feat.topup.amount_usd' : 'feat.topup.amount')}
                type="number"
                value={amount}
                onChange={(e) => setAmount(normaliseAmount(e.target.value))}
                size="small"
                fullWidth
                helperText={translate('feat.topup.min', { n: min })}
                slotProps={{ htmlInput: { min: 1, step: 1, 'data-testid': 'topup-amount' } }}
              />
              <Stack direction="row" sx={{ alignItems: 'baseline', mt: 1.5, mb: 2 }} spacing={1}>
                <Typography variant="body2" color="text.secondary">
                  {translate('feat.topup.pay_amount')}
                </Typography>
                <Typography variant="h6" color="error.main" data-testid="topup-price">
                  {price !== null ? translate('feat.topup.yuan', { amount: price }) : '-'}
                </Typography>
              </Stack>
              {!online && (
                <Alert severity="info" sx={{ mb: 1 }} data-testid="pay-disabled-reason">
                  {translate('feat.topup.online_disabled_reason')}
                </Alert>
              )}
              <Stack direction="row" spacing={1} sx={{ flexWrap: 'wrap', rowGap: 1 }}>
                <Button
                  variant="contained"
                  disableElevation
                  onClick={() => startPay('zfb')}
                  disabled={!online}
                  sx={{ bgcolor: '#1677ff', '&:hover': { bgcolor: '#0958d9' } }}
                  data-testid="pay-zfb"
                >
                  {translate('feat.topup.zfb')}
                </Button>
                <Button
                  variant="contained"
                  disableElevation
                  onClick={() => startPay('wx')}
                  disabled={!online}
                  sx={{ bgcolor: '#07c160', '&:hover': { bgcolor: '#06a052' } }}
                  data-testid="pay-wx"
                >
                  {translate('feat.topup.wx')}
                </Button>
              </Stack>
            </CardContent>
          </Card>
        </Grid>
        <Grid size={12}>
          <Card variant="outlined">
            <CardContent>
              <Typography variant="h6" sx={{ mb: 1 }}>
                {translate('feat.topup.records')}
              </Typography>
              {records.length === 0 ? (
                <Typography variant="body2" color="text.secondary" data-testid="topup-records-empty">
                  {translate('feat.topup.records_empty')}
                </Typography>
              ) : (
                <TableContainer sx={{ overflowX: 'auto' }}>
                  <Table size="small" data-testid="topup-records">
                    <TableHead>
                      <TableRow>
                        <TableCell>{translate('feat.topup.trade_no')}</TableCell>
                        <TableCell>{translate('feat.topup.amount')}</TableCell>
                        <TableCell>{translate('feat.topup.money')}</TableCell>
                        <TableCell>{translate('feat.topup.method')}</TableCell>
                        <TableCell>{translate('feat.topup.status')}</TableCell>
                        <TableCell>{translate('feat.topup.created')}</TableCell>
                      </TableRow>
                    </TableHead>
                    <TableBody>
                      {records.map((r) => (
                        <TableRow key={`${r.kind ?? 'order'}-${r.id}`} data-testid={`topup-record-${r.kind ?? 'order'}-${r.id}`}>
                          <TableCell sx={{ fontFamily: r.kind === 'redemption' ? undefined : 'monospace', fontSize: 12 }}>{r.trade_no}</TableCell>
                          <TableCell>{r.kind === 'redemption' ? formatQuota(r.quota ?? 0, display) : r.amount}</TableCell>
                          <TableCell>{r.kind === 'redemption' ? '-' : translate('feat.topup.yuan', { amount: yuanText(r.money) })}</TableCell>
                          <TableCell>
                            {r.payment_method === 'wx'
                              ? translate('feat.topup.wx')
                              : r.payment_method === 'zfb'
                                ? translate('feat.topup.zfb')
                                : r.payment_method === 'redemption'
                                  ? translate('feat.topup.redemption')
                                  : r.payment_method}
                          </TableCell>
                          <TableCell>
                            <ColorTag tone={orderStatusTone(r.status)} label={translate(`feat.topup.order.${r.status}`, { _: r.status })} />
                          </TableCell>
                          <TableCell sx={{ whiteSpace: 'nowrap' }}>{formatTimestamp(r.create_time)}</TableCell>
                        </TableRow>
                      ))}
                    </TableBody>
                  </Table>
                </TableContainer>
              )}
            </CardContent>
          </Card>
        </Grid>
      </Grid>

      <Dialog open={confirm !== null} onClose={() => !paying && setConfirm(null)} maxWidth="xs" fullWidth>
        <DialogTitle>{translate('feat.topup.confirm_title')}</DialogTitle>
        <DialogContent>
          <Typography>{translate('feat.topup.confirm_amount', { amount })}</Typography>
          <Typography>{translate('feat.topup.confirm_price', { price: price ?? '-' })}</Typography>
          <Typography>{translate('feat.topup.confirm_method', { method: confirm ? translate(`feat.topup.${confirm}`) : '' })}</Typography>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setConfirm(null)} disabled={paying}>
            {translate('app.common.cancel')}
          </Button>
          <Button variant="contained" disableElevation onClick={pay} disabled={paying} data-testid="pay-confirm">
            {paying ? <CircularProgress size={18} color="inherit" /> : translate('feat.topup.pay')}
          </Button>
        </DialogActions>
      </Dialog>
    </Box>
  );
}
