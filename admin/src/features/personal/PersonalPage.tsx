import { Title, useTranslate } from 'react-admin';
import { Box, Stack } from '@mui/material';
import Grid from '@mui/material/Grid';
import { AccountCard, ModelsCard } from './AccountCard';
import { InviteCard } from './InviteCard';
import { BindingsCard } from './BindingsCard';
import { SecurityCard } from './SecurityCard';
import { SettingsTabs } from './SettingsTabs';
import { useSelf } from './useSelf';
import { PasskeysCard, TwoFactorCard } from '../security';

/** Personal settings page: account, bindings, security, invitations and settings. */
export function PersonalPage() {
  const translate = useTranslate();
  const { self, loading, reload } = useSelf();
  const refresh = () => void reload();
  return (
    <Box sx={{ maxWidth: 1200, mx: 'auto', width: '100%' }} data-testid="personal-page">
      <Title title={translate('feat.personal.title')} />
      <Grid container spacing={2}>
        <Grid size={{ xs: 12, md: 7, lg: 8 }}>
          <Stack spacing={2}>
            <AccountCard self={self} loading={loading} onRefresh={refresh} />
            <ModelsCard />
            <SettingsTabs self={self} onSaved={refresh} />
          </Stack>
        </Grid>
        <Grid size={{ xs: 12, md: 5, lg: 4 }}>
          <Stack spacing={2}>
            <SecurityCard self={self} />
            <TwoFactorCard />
            <PasskeysCard />
            <InviteCard self={self} onChanged={refresh} />
            <BindingsCard self={self} onChanged={refresh} />
          </Stack>
        </Grid>
      </Grid>
    </Box>
  );
}
