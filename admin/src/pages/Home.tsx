import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link as RouterLink } from 'react-router-dom';
import { useTranslate } from 'react-admin';
import { Box, Button, Card, CardContent, Chip, Container, Grid, IconButton, Paper, Stack, Tooltip, Typography } from '@mui/material';
import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import SwapHorizIcon from '@mui/icons-material/SwapHoriz';
import PaymentsIcon from '@mui/icons-material/PaymentsOutlined';
import HubIcon from '@mui/icons-material/HubOutlined';
import InsightsIcon from '@mui/icons-material/InsightsOutlined';
import { api } from '../lib/http';
import { store } from '../lib/storage';
import { useStatus } from '../lib/StatusContext';
import { useStoredUser } from '../lib/useUser';
import { HtmlContent } from '../components/HtmlContent';
import { useCopy } from '../components/CopyDialog';
import { NoticeDialog } from '../components/NoticeDialog';
import { LOAD_ONCE } from '../resources/shared/hooks';

const CACHE_KEY = 'home_page_content';

/** The home page content, stored for the next visit; null when the server did not give it. */
async function loadHomeContent(): Promise<string | null> {
  const r = await api()
    .raw<string>('GET', '/api/home_page_content')
    .catch(() => null);
  if (!r?.success) return null;
  const v = String(r.data ?? '');
  store().setItem(CACHE_KEY, v);
  return v;
}

/** Home: the admin's HomePageContent (GET /api/home_page_content) when set, else a default page; the notice over either. */
export function Home() {
  const translate = useTranslate();
  const { status } = useStatus();
  const user = useStoredUser();
  const { copy, dialog } = useCopy();
  // The last content shown, until the server answers (or when it cannot).
  const [stored] = useState<string>(() => store().getItem(CACHE_KEY) ?? '');
  const home = useQuery({ queryKey: ['gateway', 'homePageContent'], queryFn: loadHomeContent, ...LOAD_ONCE });
  const content = home.data ?? stored;
  const loaded = home.isFetchedAfterMount;

  if (content.trim()) {
    if (/^https?:\/\/\S+$/i.test(content.trim()))
      return (
        <>
          <NoticeDialog />
          <HtmlContent content={content} testId="home-content" />
        </>
      );
    return (
      <Container maxWidth="lg" sx={{ py: 3 }}>
        <NoticeDialog />
        <HtmlContent content={content} testId="home-content" />
      </Container>
    );
  }

  const name = status.system_name || translate('app.name');
  const base = typeof window !== 'undefined' ? window.location.origin : '';
  const features = [
    { icon: <SwapHorizIcon color="primary" />, key: 'feature_relay' },
    { icon: <PaymentsIcon color="primary" />, key: 'feature_billing' },
    { icon: <HubIcon color="primary" />, key: 'feature_channels' },
    { icon: <InsightsIcon color="primary" />, key: 'feature_logs' },
  ];
  return (
    <Box data-testid="home" data-loaded={loaded ? 'true' : 'false'}>
      {dialog}
      <NoticeDialog />
      <Box
        sx={{
          py: { xs: 6, md: 10 },
          px: 2,
          textAlign: 'center',
          background: (t) =>
            t.palette.mode === 'dark'
              ? 'linear-gradient(180deg, rgba(33,150,243,0.12) 0%, rgba(0,0,0,0) 100%)'
              : 'linear-gradient(180deg, rgba(33,150,243,0.10) 0%, rgba(255,255,255,0) 100%)',
        }}
      >
        <Container maxWidth="md">
          <Typography variant="h3" component="h1" sx={{ fontWeight: 800, fontSize: { xs: 32, md: 48 } }}>
            {name}
          </Typography>
          <Typography variant="h6" color="text.secondary" sx={{ mt: 1 }}>
            {translate('app.home.subtitle')}
          </Typography>
          <Typography color="text.secondary" sx={{ mt: 2, maxWidth: 640, mx: 'auto' }}>
            {translate('app.home.lead')}
          </Typography>
          <Paper variant="outlined" sx={{ mt: 4, mx: 'auto', maxWidth: 520, display: 'flex', alignItems: 'center', px: 2, py: 1, borderRadius: 2 }}>
            <Chip size="small" label={translate('app.home.base_url')} sx={{ mr: 1.5 }} />
            <Typography sx={{ flex: 1, fontFamily: 'monospace', textAlign: 'left', overflow: 'hidden', textOverflow: 'ellipsis' }} data-testid="base-url">
              {base}
            </Typography>
            <Tooltip title={translate('app.copy.copied')}>
              <IconButton size="small" onClick={() => void copy(base)} aria-label="copy">
                <ContentCopyIcon fontSize="small" />
              </IconButton>
            </Tooltip>
          </Paper>
          <Stack direction="row" spacing={2} justifyContent="center" sx={{ mt: 4 }}>
            <Button variant="contained" size="large" component={RouterLink} to={user ? '/token' : '/login'} disableElevation>
              {translate('app.home.start')}
            </Button>
            <Button variant="outlined" size="large" component={RouterLink} to="/pricing">
              {translate('app.home.pricing')}
            </Button>
            {status.docs_link ? (
              <Button variant="text" size="large" href={String(status.docs_link)} target="_blank" rel="noreferrer">
                {translate('app.home.docs')}
              </Button>
            ) : null}
          </Stack>
        </Container>
      </Box>
      <Container maxWidth="lg" sx={{ pb: 6 }}>
        <Grid container spacing={2}>
          {features.map((f) => (
            <Grid key={f.key} size={{ xs: 12, sm: 6, md: 3 }}>
              <Card variant="outlined" sx={{ height: '100%', borderRadius: 2 }}>
                <CardContent>
                  {f.icon}
                  <Typography sx={{ mt: 1 }}>{translate(`app.home.${f.key}`)}</Typography>
                </CardContent>
              </Card>
            </Grid>
          ))}
        </Grid>
        {status.version ? (
          <Typography variant="body2" color="text.secondary" sx={{ mt: 3, textAlign: 'center' }}>
            {translate('app.home.version')}: v{status.version}
            {status.start_time ? ` · ${translate('app.home.started')}: ${new Date(Number(status.start_time) * 1000).toLocaleString()}` : ''}
          </Typography>
        ) : null}
      </Container>
    </Box>
  );
}
