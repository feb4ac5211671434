import { useEffect, useMemo, useState } from 'react';
import { Title, useTranslate } from 'react-admin';
import { useQuery } from '@tanstack/react-query';
import {
  Alert,
  Box,
  Button,
  Card,
  Checkbox,
  Link,
  CircularProgress,
  InputAdornment,
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
} from '@mui/material';
import SearchIcon from '@mui/icons-material/Search';
import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import CheckCircleIcon from '@mui/icons-material/CheckCircle';
import CancelIcon from '@mui/icons-material/Cancel';
import { Link as RouterLink } from 'react-router-dom';
import { api, errorText } from '../../lib/http';
import { useStoredUser } from '../../lib/useUser';
import { useStatus } from '../../lib/StatusContext';
import { ColorTag } from '../../resources/shared/ColorTag';
import { useCopy } from '../../resources/shared/copy';
import { LOAD_ONCE } from '../../resources/shared/hooks';
import { groupRatioColor, readDisplaySettings, type DisplaySettings } from '../../resources/shared/format';
import {
  filterModels,
  formatPrice,
  groupRatioOf,
  initialGroup,
  availability,
  normalisePricing,
  priceOf,
  selectionText,
  sortModels,
  usableGroupsOf,
} from './pricingTable';

/** /pricing (public): model prices for the viewed group. */
export function PricingPage() {
  const translate = useTranslate();
  const user = useStoredUser();
  const { status } = useStatus();
  const { copy, dialog } = useCopy();
  const pricing = useQuery({ queryKey: ['gateway', 'pricing'], queryFn: () => api().get('/api/pricing').then(normalisePricing), ...LOAD_ONCE });
  const answer = pricing.data ?? null;
  const error = pricing.error ? errorText(pricing.error, translate) : null;
  const [query, setQuery] = useState('');
  const [group, setGroup] = useState(() => initialGroup(user?.group));
  const [selected, setSelected] = useState<string[]>([]);

  useEffect(() => setGroup(initialGroup(user?.group)), [user?.group]);

  // Re-read on status changes (display_in_currency / quota_per_unit).
  // eslint-disable-next-line react-hooks/exhaustive-deps -- `status` is only the re-read trigger: readDisplaySettings() reads the localStorage copy the shell stores with each status
  const display: DisplaySettings = useMemo(() => readDisplaySettings(), [status]);
  const rows = useMemo(() => (answer ? filterModels(sortModels(answer.data), query) : []), [answer, query]);
  const ratio = answer ? groupRatioOf(answer.group_ratio, group) : 1;
  const defaultRatio = answer ? groupRatioOf(answer.group_ratio, 'default') : 1;
  const isAdmin = Number(user?.role ?? 0) >= 10;
  const allChecked = rows.length > 0 && rows.every((r) => selected.includes(r.model_name));

  const toggle = (name: string) => setSelected((s) => (s.includes(name) ? s.filter((n) => n !== name) : [...s, name]));
  const toggleAll = () =>
    setSelected(allChecked ? selected.filter((n) => !rows.some((r) => r.model_name === n)) : [...new Set([...selected, ...rows.map((r) => r.model_name)])]);

  return (
    <Box sx={{ display: 'flex', flexDirection: 'column', gap: 2, py: 2 }} data-testid="pricing-page">
      <Title title={translate('feat.pricing.title')} />
      {user ? (
        <Alert severity="info" data-testid="pricing-group-banner">
          {translate('feat.pricing.group_banner', { group, ratio })}
          {group !== initialGroup(user.group) && (
            <Button size="small" sx={{ ml: 1 }} onClick={() => setGroup(initialGroup(user.group))}>
              {translate('feat.pricing.back_to_mine')}
            </Button>
          )}
        </Alert>
      ) : (
        <Alert severity="warning" data-testid="pricing-group-banner">
          {translate('feat.pricing.visitor_banner', { ratio: defaultRatio })}
          {group !== 'default' && ` ${translate('feat.pricing.viewing', { group, ratio })}`}
        </Alert>
      )}
      <Alert severity="success" icon={false}>
        <Typography variant="body2">{translate('feat.pricing.formula')}</Typography>
      </Alert>
      <Card variant="outlined">
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ p: 2 }} alignItems={{ sm: 'center' }}>
          <TextField
            size="small"
            value={query}
            onChange={(e) => setQuery(e.target.value)}
            placeholder={translate('feat.pricing.search')}
            sx={{ flex: 1, maxWidth: { sm: 420 } }}
            slotProps={{
              input: {
                startAdornment: (
                  <InputAdornment position="start">
                    <SearchIcon fontSize="small" />
                  </InputAdornment>
                ),
              },
            }}
          />
          <Button variant="contained" startIcon={<ContentCopyIcon />} disabled={!selected.length} onClick={() => void copy(selectionText(selected))}>
            {translate('feat.pricing.copy_selected', { count: selected.length })}
          </Button>
        </Stack>
        {error && (
          <Alert severity="error" sx={{ mx: 2, mb: 2 }}>
            {error}
          </Alert>
        )}
        {!answer && !error ? (
          <Box sx={{ textAlign: 'center', py: 6 }}>
            <CircularProgress size={28} />
          </Box>
        ) : (
          <TableContainer>
            <Table size="small" sx={{ '& th': { whiteSpace: 'nowrap' } }}>
              <TableHead>
                <TableRow>
                  <TableCell padding="checkbox">
                    <Checkbox size="small" checked={allChecked} onChange={toggleAll} inputProps={{ 'aria-label': 'select all' }} />
                  </TableCell>
                  <TableCell>{translate('feat.pricing.col.available')}</TableCell>
                  <TableCell>{translate('feat.pricing.col.model')}</TableCell>
                  <TableCell>{translate('feat.pricing.col.type')}</TableCell>
                  <TableCell>{translate('feat.pricing.col.groups')}</TableCell>
                  <TableCell>{translate('feat.pricing.col.ratio')}</TableCell>
                  <TableCell>{translate('feat.pricing.col.price')}</TableCell>
                </TableRow>
              </TableHead>
              <TableBody>
                {rows.length === 0 && (
                  <TableRow>
                    <TableCell colSpan={7} align="center" sx={{ py: 4, color: 'text.secondary' }}>
                      {translate('feat.pricing.empty')}
                    </TableCell>
                  </TableRow>
                )}
                {rows.map((e) => {
                  const p = priceOf(e, ratio);
                  const state = availability(e, group);
                  const available = state === 'ok' || state === 'default';
                  return (
                    <TableRow key={e.model_name} hover data-testid={`pricing-row-${e.model_name}`}>
                      <TableCell padding="checkbox">
                        <Checkbox size="small" checked={selected.includes(e.model_name)} onChange={() => toggle(e.model_name)} />
                      </TableCell>
                      <TableCell>
                        <Tooltip
                          title={translate(
                            state === 'ok'
                              ? 'feat.pricing.available'
                              : state === 'default'
                                ? 'feat.pricing.default_tip'
                                : state === 'unpriced'
                                  ? 'feat.pricing.unpriced_tip'
                                  : 'feat.pricing.unavailable',
                            { group },
                          )}
                        >
                          {available ? (
                            <CheckCircleIcon color="success" fontSize="small" data-testid={`pricing-ok-${e.model_name}`} />
                          ) : (
                            <CancelIcon color="error" fontSize="small" data-testid={`pricing-unavailable-${e.model_name}`} />
                          )}
                        </Tooltip>
                      </TableCell>
                      <TableCell>
                        <Tooltip title={translate('feat.pricing.click_copy')}>
                          <Box
                            component="span"
                            sx={{ cursor: 'pointer', fontFamily: 'monospace', whiteSpace: 'nowrap', '&:hover': { color: 'primary.main' } }}
                            onClick={() => void copy(e.model_name)}
                          >
                            {e.model_name}
                          </Box>
                        </Tooltip>
                      </TableCell>
                      <TableCell>
                        <ColorTag
                          tone={e.quota_type === 1 ? 'teal' : 'violet'}
                          label={translate(e.quota_type === 1 ? 'feat.pricing.per_call' : 'feat.pricing.per_token')}
                        />
                      </TableCell>
                      <TableCell>
                        <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 0.5, minWidth: 120 }}>
                          {usableGroupsOf(e, answer?.usable_group ?? {}).map((g) => (
                            <ColorTag
                              key={g}
                              tone={g === group ? groupRatioColor(groupRatioOf(answer?.group_ratio ?? {}, g)) : 'grey'}
                              label={g}
                              variant={g === group ? 'filled' : 'outlined'}
                              onClick={() => setGroup(g)}
                              sx={{ cursor: 'pointer', fontWeight: g === group ? 700 : 400 }}
                              data-testid={`pricing-group-${e.model_name}-${g}`}
                            />
                          ))}
                        </Box>
                      </TableCell>
                      <TableCell sx={{ whiteSpace: 'nowrap' }}>
                        {state === 'unpriced' ? (
                          <Typography variant="body2">-</Typography>
                        ) : e.quota_type === 1 ? (
                          <Typography variant="body2">{translate('feat.pricing.group_ratio', { ratio })}</Typography>
                        ) : (
                          <>
                            <Typography variant="body2">
                              {translate(e.priced ? 'feat.pricing.model_ratio' : 'feat.pricing.default_ratio', { ratio: e.model_ratio })}
                            </Typography>
                            <Typography variant="body2">{translate('feat.pricing.completion_ratio', { ratio: e.completion_ratio })}</Typography>
                            <Typography variant="body2">{translate('feat.pricing.group_ratio', { ratio })}</Typography>
                          </>
                        )}
                      </TableCell>
                      <TableCell sx={{ whiteSpace: 'nowrap' }} data-testid={`pricing-price-${e.model_name}`}>
                        {state === 'unpriced' ? (
                          <Box data-testid={`pricing-unpriced-${e.model_name}`}>
                            <Typography variant="body2" color="error">
                              {translate('feat.pricing.unpriced')}
                            </Typography>
                            <Typography variant="caption" color="text.secondary" sx={{ whiteSpace: 'normal', display: 'block', maxWidth: 260 }}>
                              {translate('feat.pricing.unpriced_why')}
                            </Typography>
                            {isAdmin && (
                              <Link component={RouterLink} to="/setting?tab=operation" variant="caption" data-testid={`pricing-fix-${e.model_name}`}>
                                {translate('feat.pricing.set_ratio')}
                              </Link>
                            )}
                          </Box>
                        ) : p.kind === 'call' ? (
                          <Typography variant="body2">{translate('feat.pricing.call_price', { price: formatPrice(p.call ?? 0, display) })}</Typography>
                        ) : (
                          <>
                            <Typography variant="body2">{translate('feat.pricing.prompt_price', { price: formatPrice(p.prompt ?? 0, display) })}</Typography>
                            <Typography variant="body2">
                              {translate('feat.pricing.completion_price', { price: formatPrice(p.completion ?? 0, display) })}
                            </Typography>
                            {!e.priced && (
                              <Typography
                                variant="caption"
                                color="warning.main"
                                sx={{ whiteSpace: 'normal', display: 'block', maxWidth: 260 }}
                                data-testid={`pricing-default-${e.model_name}`}
                              >
                                {translate('feat.pricing.default_billed', { ratio: e.model_ratio })}
                              </Typography>
                            )}
                          </>
                        )}
                      </TableCell>
                    </TableRow>
                  );
                })}
              </TableBody>
            </Table>
          </TableContainer>
        )}
      </Card>
      {dialog}
    </Box>
  );
}
