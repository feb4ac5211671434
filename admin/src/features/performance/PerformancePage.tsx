import { useCallback, useState, type ReactNode } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, Box, Button, Card, CardContent, LinearProgress, MenuItem, TextField, Typography } from '@mui/material';
import RefreshIcon from '@mui/icons-material/Refresh';
import { Title, useTranslate } from 'react-admin';
import { api } from '../../lib/http';
import { isAdmin } from '../../lib/storage';
import { useStoredUser } from '../../lib/useUser';
import { ColorTag } from '../../resources/shared/ColorTag';
import { formatTimestamp } from '../../resources/shared/format';
import { LOAD_ONCE, useNotifyError, useQueryError } from '../../resources/shared/hooks';
import { REFRESH_CHOICES, cpuColor, cpuPercent, delayColor, formatBytes, formatUptime, heapPercent, type PerfData } from './metricsFormat';

function Metric({ label, value, testId }: { label: string; value: ReactNode; testId?: string }) {
  return (
    <Box
      sx={{
        display: 'flex',
        justifyContent: 'space-between',
        alignItems: 'center',
        gap: 2,
        py: 0.75,
        borderBottom: 1,
        borderColor: 'divider',
        '&:last-child': { borderBottom: 0 },
      }}
    >
      <Typography variant="body2" color="text.secondary">
        {label}
      </Typography>
      <Box sx={{ textAlign: 'right', fontVariantNumeric: 'tabular-nums' }} data-testid={testId}>
        {typeof value === 'string' || typeof value === 'number' ? <Typography variant="body2">{value}</Typography> : value}
      </Box>
    </Box>
  );
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Card variant="outlined" sx={{ flex: '1 1 300px', minWidth: 0 }}>
      <CardContent>
        <Typography variant="subtitle1" sx={{ fontWeight: 600, mb: 1 }}>
          {title}
        </Typography>
        {children}
      </CardContent>
    </Card>
  );
}

const PERF_KEY = ['gateway', 'performance'] as const;

interface PerfSample {
  data: PerfData;
  cpu: number | null;
}

/** /performance (admin): the server process's metrics, refreshed on demand or periodically. */
export function PerformancePage() {
  const translate = useTranslate();
  const notifyError = useNotifyError();
  const admin = isAdmin(useStoredUser());
  const [every, setEvery] = useState<number>(5);
  const queryClient = useQueryClient();

  // Each sample keeps the CPU share since the one before it; the samples are forgotten when the page
  // goes (gcTime 0), so the CPU is pending again on the next visit.
  const query = useQuery({
    queryKey: PERF_KEY,
    queryFn: async (): Promise<PerfSample> => {
      const res = await api().get<PerfData>('/api/performance');
      const prev = queryClient.getQueryData<PerfSample>(PERF_KEY)?.data ?? null;
      return { data: res.data, cpu: cpuPercent(prev, res.data) };
    },
    enabled: admin,
    refetchInterval: every ? every * 1000 : false,
    refetchIntervalInBackground: true,
    gcTime: 0,
    ...LOAD_ONCE,
  });
  useQueryError(query, notifyError);
  const data = query.data?.data ?? null;
  const cpu = query.data?.cpu ?? null;
  const loading = query.isFetching;
  const { refetch } = query;
  const load = useCallback(async () => {
    await refetch();
  }, [refetch]);

  if (!admin) {
    return (
      <Card variant="outlined">
        <Title title={translate('feat.performance.title')} />
        <Alert severity="warning" sx={{ m: 2 }}>
          {translate('feat.performance.admin_only')}
        </Alert>
      </Card>
    );
  }

  const units = {
    d: translate('feat.performance.unit.d'),
    h: translate('feat.performance.unit.h'),
    m: translate('feat.performance.unit.m'),
    s: translate('feat.performance.unit.s'),
  };
  const delay = data?.event_loop_delay_ms;
  const ms = (v: number | null | undefined) => `${(Number(v) || 0).toFixed(2)} ms`;

  return (
    <Box sx={{ display: 'flex', flexDirection: 'column', gap: 2, minWidth: 0 }}>
      <Title title={translate('feat.performance.title')} />
      <Card variant="outlined">
        <Box sx={{ display: 'flex', flexWrap: 'wrap', alignItems: 'center', gap: 1.5, p: 2 }}>
          <Button variant="contained" startIcon={<RefreshIcon />} onClick={() => void load()} disabled={loading}>
            {translate('feat.performance.refresh')}
          </Button>
          <TextField
            select
            size="small"
            label={translate('feat.performance.auto')}
            value={every}
            onChange={(e) => setEvery(Number(e.target.value))}
            sx={{ width: 150 }}
          >
            {REFRESH_CHOICES.map((s) => (
              <MenuItem key={s} value={s}>
                {s ? translate('feat.performance.every', { s }) : translate('feat.performance.off')}
              </MenuItem>
            ))}
          </TextField>
          {data?.sampled_at_ms && (
            <Typography variant="body2" color="text.secondary">
              {translate('feat.performance.sampled', { time: formatTimestamp(Math.floor(data.sampled_at_ms / 1000)) })}
            </Typography>
          )}
        </Box>
        {loading && <LinearProgress />}
      </Card>
      {data && (
        <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 2 }}>
          <Section title={translate('feat.performance.process')}>
            <Metric label={translate('feat.performance.uptime')} value={formatUptime(data.uptime_seconds, units)} testId="perf-uptime" />
            <Metric label={translate('feat.performance.start_time')} value={formatTimestamp(data.start_time)} />
            <Metric label={translate('feat.performance.node')} value={data.node_version ?? '-'} />
            <Metric label={translate('feat.performance.platform')} value={data.platform ?? '-'} />
            <Metric label="PID" value={String(data.pid ?? '-')} />
            <Metric label={translate('feat.performance.database')} value={<ColorTag tone="blue" label={data.database} />} testId="perf-db" />
            <Metric
              label={translate('feat.performance.cache')}
              value={<ColorTag tone={data.cache === 'redis' ? 'red' : 'grey'} label={data.cache} />}
              testId="perf-cache"
            />
          </Section>
          <Section title={translate('feat.performance.memory')}>
            <Metric label="RSS" value={formatBytes(data.memory.rss)} testId="perf-rss" />
            <Metric
              label={translate('feat.performance.heap')}
              value={
                <Box sx={{ minWidth: 160 }}>
                  <Typography variant="body2">
                    {formatBytes(data.memory.heap_used)} / {formatBytes(data.memory.heap_total)}
                  </Typography>
                  <LinearProgress variant="determinate" value={heapPercent(data.memory)} sx={{ mt: 0.5, height: 6, borderRadius: 3 }} />
                </Box>
              }
            />
            <Metric label={translate('feat.performance.external')} value={formatBytes(data.memory.external)} />
          </Section>
          <Section title={translate('feat.performance.cpu')}>
            <Metric
              label={translate('feat.performance.cpu_now')}
              value={<ColorTag tone={cpuColor(cpu, 1)} label={cpu === null ? translate('feat.performance.cpu_pending') : `${cpu}%`} />}
              testId="perf-cpu"
            />
            <Metric label={translate('feat.performance.cpu_user')} value={`${(data.cpu_user_us / 1e6).toFixed(2)} s`} />
            <Metric label={translate('feat.performance.cpu_system')} value={`${(data.cpu_system_us / 1e6).toFixed(2)} s`} />
            <Metric label={translate('feat.performance.cores')} value={String(data.cpu_count ?? '-')} />
            <Metric label={translate('feat.performance.load')} value={data.load_average ? data.load_average.map((v) => v.toFixed(2)).join(' / ') : '-'} />
          </Section>
          <Section title={translate('feat.performance.event_loop')}>
            <Metric
              label={translate('feat.performance.delay_mean')}
              value={<ColorTag tone={delayColor(delay?.mean)} label={ms(delay?.mean)} />}
              testId="perf-delay"
            />
            <Metric label="P99" value={<ColorTag tone={delayColor(delay?.p99)} label={ms(delay?.p99)} />} />
            <Metric label={translate('feat.performance.delay_max')} value={<ColorTag tone={delayColor(delay?.max)} label={ms(delay?.max)} />} />
          </Section>
        </Box>
      )}
    </Box>
  );
}
