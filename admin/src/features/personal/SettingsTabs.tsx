import { useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { useMutation } from '@tanstack/react-query';
import {
  Box,
  Button,
  Card,
  CardContent,
  Chip,
  CircularProgress,
  FormControlLabel,
  Radio,
  RadioGroup,
  Stack,
  Switch,
  Tab,
  Tabs,
  TextField,
  Typography,
} from '@mui/material';
import { api, errorText } from '../../lib/http';
import { parseSetting, settingBody, settingProblem, THRESHOLD_PRESETS, type UserSetting } from './personalSettings';
import type { SelfUser } from './useSelf';
import { quotaPresetLabel } from '../../resources/shared/format';
import { useDisplaySettings } from '../../resources/shared/hooks';

/** Notification and price settings (PUT /api/user/setting). */
export function SettingsTabs({ self, onSaved }: { self: SelfUser | null; onSaved: () => void }) {
  const translate = useTranslate();
  const display = useDisplaySettings();
  const notify = useNotify();
  const [tab, setTab] = useState<'notify' | 'price'>('notify');
  const [s, setS] = useState<UserSetting>(() => parseSetting(self?.setting));
  const [thresholdText, setThresholdText] = useState(() => String(parseSetting(self?.setting).quota_warning_threshold));

  // Re-read when the server's copy arrives (the stored user has no setting).
  const rawSetting = self?.setting;
  useEffect(() => {
    const parsed = parseSetting(rawSetting);
    setS(parsed);
    setThresholdText(String(parsed.quota_warning_threshold));
  }, [rawSetting]);

  const saveCall = useMutation({
    mutationFn: (next: UserSetting) => api().put('/api/user/setting', settingBody(next)),
    onSuccess: () => {
      notify('feat.personal.notify.ok', { type: 'success' });
      onSaved();
    },
    onError: (err) => notify(`${translate('feat.personal.notify.failed')}: ${errorText(err, translate)}`, { type: 'error' }),
  });
  const busy = saveCall.isPending;

  const save = () => {
    const next = { ...s, quota_warning_threshold: Number(thresholdText) };
    const problem = settingProblem(next);
    if (problem) return notify(problem.key, { type: 'error' });
    saveCall.mutate(next);
  };

  return (
    <Card variant="outlined" data-testid="personal-settings">
      <Tabs
        value={tab}
        onChange={(_, v) => setTab(v)}
        sx={{ px: 2, borderBottom: 1, borderColor: 'divider', '& .MuiTab-root': { textTransform: 'none', fontSize: 15 } }}
        variant="scrollable"
        allowScrollButtonsMobile
      >
        <Tab value="notify" label={translate('feat.personal.notify.tab')} data-testid="personal-tab-notify" />
        <Tab value="price" label={translate('feat.personal.price.tab')} data-testid="personal-tab-price" />
      </Tabs>
      <CardContent>
        {tab === 'notify' ? (
          <Stack spacing={2.5}>
            <Box>
              <Typography variant="subtitle2" sx={{ mb: 0.5 }}>
                {translate('feat.personal.notify.type')}
              </Typography>
              <RadioGroup row value={s.notify_type} onChange={(e) => setS({ ...s, notify_type: e.target.value === 'webhook' ? 'webhook' : 'email' })}>
                <FormControlLabel
                  value="email"
                  control={<Radio size="small" />}
                  label={translate('feat.personal.notify.email')}
                  data-testid="personal-notify-email"
                />
                <FormControlLabel
                  value="webhook"
                  control={<Radio size="small" />}
                  label={translate('feat.personal.notify.webhook')}
                  data-testid="personal-notify-webhook"
                />
              </RadioGroup>
            </Box>
            <Box>
              <TextField
                label={translate('feat.personal.notify.threshold')}
                type="number"
                value={thresholdText}
                onChange={(e) => setThresholdText(e.target.value)}
                size="small"
                fullWidth
                helperText={translate('feat.personal.notify.threshold_hint')}
                slotProps={{ htmlInput: { min: 1, step: 1, 'data-testid': 'personal-threshold' } }}
              />
              <Stack direction="row" sx={{ mt: 1, flexWrap: 'wrap', gap: 1 }}>
                {THRESHOLD_PRESETS.map((p) => (
                  <Chip
                    key={p.value}
                    size="small"
                    label={quotaPresetLabel(p.value, display)}
                    color={Number(thresholdText) === p.value ? 'primary' : 'default'}
                    variant={Number(thresholdText) === p.value ? 'filled' : 'outlined'}
                    onClick={() => setThresholdText(String(p.value))}
                    data-testid={`personal-threshold-${p.value}`}
                  />
                ))}
              </Stack>
            </Box>
            {s.notify_type === 'email' ? (
              <TextField
                label={translate('feat.personal.notify.notification_email')}
                type="email"
                value={s.notification_email}
                onChange={(e) => setS({ ...s, notification_email: e.target.value })}
                size="small"
                fullWidth
                placeholder={self?.email || ''}
                helperText={translate('feat.personal.notify.notification_email_hint')}
                slotProps={{ htmlInput: { 'data-testid': 'personal-notify-email-input' } }}
              />
            ) : (
              <>
                <TextField
                  label={translate('feat.personal.notify.webhook_url')}
                  value={s.webhook_url}
                  onChange={(e) => setS({ ...s, webhook_url: e.target.value })}
                  size="small"
                  fullWidth
                  placeholder="https://example.com/webhook"
                  helperText={translate('feat.personal.notify.webhook_url_hint')}
                  slotProps={{ htmlInput: { 'data-testid': 'personal-webhook-url' } }}
                />
                <TextField
                  label={translate('feat.personal.notify.webhook_secret')}
                  type="password"
                  autoComplete="off"
                  value={s.webhook_secret}
                  onChange={(e) => setS({ ...s, webhook_secret: e.target.value })}
                  size="small"
                  fullWidth
                  helperText={translate('feat.personal.notify.webhook_secret_hint')}
                  slotProps={{ htmlInput: { 'data-testid': 'personal-webhook-secret' } }}
                />
              </>
            )}
          </Stack>
        ) : (
          <Box>
            <FormControlLabel
              control={
                <Switch
                  checked={s.accept_unset_model_ratio_model}
                  onChange={(e) => setS({ ...s, accept_unset_model_ratio_model: e.target.checked })}
                  data-testid="personal-accept-unset"
                />
              }
              label={translate('feat.personal.price.accept_unset')}
            />
            <Typography variant="body2" color="text.secondary" sx={{ mt: 0.5 }}>
              {translate('feat.personal.price.accept_unset_hint')}
            </Typography>
          </Box>
        )}
        <Button variant="contained" disableElevation sx={{ mt: 3 }} onClick={save} disabled={busy} data-testid="personal-settings-save">
          {busy ? <CircularProgress size={18} color="inherit" /> : translate('feat.personal.notify.save')}
        </Button>
      </CardContent>
    </Card>
  );
}
