/** Breakers and health of channels (GET /api/channel/health): the list's health column, the dashboard's alert card. */
import { Box, Card, CardContent, Stack, Tooltip, Typography } from '@mui/material';
import { useQuery } from '@tanstack/react-query';
import { useTranslate } from 'react-admin';
import { ColorTag } from '../shared/ColorTag';
import { formatTimestamp } from '../shared/format';
import { useApi } from '../shared/api';
import { isTagRow } from './channelTags';
import type { ChannelRow } from './useChannelOps';

export interface TargetHealthView {
  breaker: 'closed' | 'open' | 'half_open';
  open_until: number;
  error_rate: number;
  ttfb_ms: number;
  samples: number;
  last_failure: string;
  last_failure_at: number;
  last_used: number;
}

export interface ChannelHealthAnswer {
  channels: Record<string, TargetHealthView & { keys: number; keys_open: number; keys_disabled: number }>;
  open: Array<{ id: number; name: string; key_index: number | null; breaker: string; open_until: number; last_failure: string }>;
  disabled: Array<{ id: number; name: string; status: number; reason: string; time: number }>;
}

/** Refreshed every 10 s while shown: breakers change on their own. */
export function useChannelHealth() {
  const http = useApi();
  return useQuery({
    queryKey: ['channel-health'],
    queryFn: async () => (await http.get<ChannelHealthAnswer>('/api/channel/health')).data,
    refetchInterval: 10_000,
    staleTime: 5_000,
  });
}

const TONE = { closed: 'green', open: 'red', half_open: 'orange' } as const;

export const BreakerTag = ({ state }: { state: TargetHealthView['breaker'] }) => {
  const translate = useTranslate();
  return <ColorTag tone={TONE[state] ?? 'grey'} label={translate(`res.channel.health.${state}`)} />;
};

/** The list's health column: breaker state, error rate and latency; the last failure in the tooltip. */
export const HealthCell = ({ row }: { row: ChannelRow }) => {
  const translate = useTranslate();
  const { data } = useChannelHealth();
  if (isTagRow(row)) return null;
  const h = data?.channels[String(row.id)];
  if (!h) return <Typography variant="caption">-</Typography>;
  const title = (
    <Box>
      <div>
        {translate('res.channel.health.error_rate')}: {(h.error_rate * 100).toFixed(1)}%
      </div>
      <div>
        {translate('res.channel.health.ttfb')}: {h.samples ? `${h.ttfb_ms} ms` : '-'}
      </div>
      {h.breaker !== 'closed' && (
        <div>
          {translate('res.channel.health.open_until')}: {formatTimestamp(h.open_until)}
        </div>
      )}
      <div>
        {translate('res.channel.health.last_failure')}: {h.last_failure || '-'}
        {h.last_failure_at ? ` (${formatTimestamp(h.last_failure_at)})` : ''}
      </div>
      {h.keys > 1 && <div>{translate('res.channel.health.keys', { n: h.keys, open: h.keys_open, disabled: h.keys_disabled })}</div>}
    </Box>
  );
  return (
    <Tooltip title={title}>
      <Stack direction="row" spacing={0.5} alignItems="center" data-testid={`health-${row.id}`}>
        <BreakerTag state={h.breaker} />
        <Typography variant="caption" color={h.error_rate > 0.2 ? 'error' : 'text.secondary'}>
          {(h.error_rate * 100).toFixed(0)}%{h.samples ? ` · ${h.ttfb_ms} ms` : ''}
        </Typography>
      </Stack>
    </Tooltip>
  );
};

/** The dashboard's card: channels (and keys) whose breaker is open right now, and disabled channels with their reason. */
export const ChannelAlerts = () => {
  const translate = useTranslate();
  const { data } = useChannelHealth();
  if (!data) return null;
  const none = !data.open.length && !data.disabled.length;
  return (
    <Card variant="outlined" data-testid="channel-alerts">
      <Typography variant="subtitle1" sx={{ px: 2, pt: 1.5, fontWeight: 600 }}>
        {translate('res.channel.health.alerts_title')}
      </Typography>
      <CardContent>
        {none ? (
          <Typography color="text.secondary">{translate('res.channel.health.alerts_none')}</Typography>
        ) : (
          <Stack spacing={1.5}>
            {data.open.length > 0 && (
              <Box>
                <Typography variant="body2" sx={{ fontWeight: 600, mb: 0.5 }}>
                  {translate('res.channel.health.alerts_open')}
                </Typography>
                {data.open.map((o) => (
                  <Stack key={`${o.id}:${o.key_index ?? ''}`} direction="row" spacing={1} alignItems="center" sx={{ flexWrap: 'wrap' }}>
                    <BreakerTag state={o.breaker as TargetHealthView['breaker']} />
                    <Typography variant="body2">
                      #{o.id} {o.name}
                      {o.key_index !== null ? ` · ${translate('res.channel.health.key', { n: o.key_index })}` : ''}
                    </Typography>
                    <Typography variant="caption" color="text.secondary">
                      {translate('res.channel.health.open_until')} {formatTimestamp(o.open_until)} · {o.last_failure || '-'}
                    </Typography>
                  </Stack>
                ))}
              </Box>
            )}
            {data.disabled.length > 0 && (
              <Box>
                <Typography variant="body2" sx={{ fontWeight: 600, mb: 0.5 }}>
                  {translate('res.channel.health.alerts_disabled')}
                </Typography>
                {data.disabled.map((d) => (
                  <Stack key={d.id} direction="row" spacing={1} alignItems="center" sx={{ flexWrap: 'wrap' }}>
                    <ColorTag tone="red" label={translate(d.status === 3 ? 'res.channel.status.auto_disabled' : 'res.channel.status.manual_disabled')} />
                    <Typography variant="body2">
                      #{d.id} {d.name}
                    </Typography>
                    <Typography variant="caption" color="text.secondary">
                      {d.reason || '-'} {d.time ? `· ${formatTimestamp(d.time)}` : ''}
                    </Typography>
                  </Stack>
                ))}
              </Box>
            )}
          </Stack>
        )}
      </CardContent>
    </Card>
  );
};
