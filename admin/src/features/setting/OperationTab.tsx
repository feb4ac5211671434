import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { Box, Button, Stack, Tab, Tabs, TextField } from '@mui/material';
import DeleteSweepIcon from '@mui/icons-material/DeleteSweepOutlined';
import RestartAltIcon from '@mui/icons-material/RestartAltOutlined';
import { Confirm, useNotify, useTranslate } from 'react-admin';
import { api } from '../../lib/http';
import { useGateway } from '../../resources/shared/api';
import { useNotifyError } from '../../resources/shared/hooks';
import { toDateTimeLocal } from '../../resources/shared/format';
import { OptionSection, SectionCard, useOptions, type FieldDef } from './OptionSection';
import { RatioEditor } from './RatioEditor';
import { UnsetModels } from './UnsetModels';
import { oneMonthAgo } from './settingOptions';

const sw = (key: string, extra: Partial<FieldDef> = {}): FieldDef => ({ key, type: 'switch', ...extra });
const num = (key: string, extra: Partial<FieldDef> = {}): FieldDef => ({ key, type: 'number', ...extra });
const text = (key: string, extra: Partial<FieldDef> = {}): FieldDef => ({ key, type: 'text', ...extra });
const json = (key: string): FieldDef => ({ key, type: 'json', rows: 6 });

export const RATIO_JSON_KEYS = ['ModelPrice', 'ModelRatio', 'CacheRatio', 'CompletionRatio', 'GroupRatio', 'UserUsableGroups'];

/** Operation settings: general, quota, monitoring, logs, chats, sensitive words, drawing, dashboard, ratios. */
export function OperationTab() {
  return (
    <Box>
      <OptionSection
        title="feat.setting.sec.general"
        testId="sec-general"
        fields={[
          text('TopUpLink'),
          text('general_setting.docs_link'),
          num('QuotaPerUnit', { help: 'feat.setting.help.quota_per_unit' }),
          num('RetryTimes'),
          sw('DisplayInCurrencyEnabled'),
          sw('DisplayTokenStatEnabled'),
          {
            key: 'DefaultCollapseSidebar',
            type: 'select',
            choices: [
              { value: 'false', label: 'feat.setting.no' },
              { value: 'true', label: 'feat.setting.yes' },
            ],
          },
          sw('DemoSiteEnabled'),
          sw('SelfUseModeEnabled'),
        ]}
      />
      <OptionSection
        title="feat.setting.sec.quota"
        fields={[num('QuotaForNewUser'), num('PreConsumedQuota'), num('QuotaForInviter'), num('QuotaForInvitee'), num('QuotaRemindThreshold')]}
      />
      <OptionSection
        title="feat.setting.sec.monitor"
        fields={[
          sw('AutomaticDisableChannelEnabled'),
          sw('AutomaticEnableChannelEnabled'),
          num('ChannelDisableThreshold'),
          sw('RoutingBreakerEnabled'),
          num('RoutingBreakerFailures'),
          num('RoutingBreakerWindowSeconds'),
          num('RoutingBreakerCooldownSeconds'),
          num('RoutingBreakerMaxCooldownSeconds'),
          sw('RoutingHealthAwareEnabled'),
          { key: 'AutomaticDisableKeywords', type: 'textarea', help: 'feat.setting.help.keywords' },
        ]}
      />
      <OptionSection title="feat.setting.sec.log" fields={[sw('LogConsumeEnabled'), sw('ErrorLogEnabled')]} extra={() => <ClearLogs />} />
      <OptionSection title="feat.setting.sec.chats" fields={[text('ChatLink'), text('ChatLink2'), { ...json('Chats'), help: 'feat.setting.help.chats' }]} />
      <OptionSection
        title="feat.setting.sec.sensitive"
        fields={[
          sw('CheckSensitiveEnabled'),
          sw('CheckSensitiveOnPromptEnabled'),
          { key: 'SensitiveWords', type: 'textarea', help: 'feat.setting.help.keywords' },
        ]}
      />
      <OptionSection
        title="feat.setting.sec.drawing"
        fields={[
          sw('DrawingEnabled'),
          sw('MjNotifyEnabled'),
          sw('MjAccountFilterEnabled'),
          sw('MjForwardUrlEnabled'),
          sw('MjModeClearEnabled'),
          sw('MjActionCheckSuccessEnabled'),
        ]}
      />
      <OptionSection
        title="feat.setting.sec.dashboard"
        fields={[
          sw('DataExportEnabled'),
          num('DataExportInterval'),
          {
            key: 'DataExportDefaultTime',
            type: 'select',
            choices: [
              { value: 'hour', label: 'feat.setting.time.hour' },
              { value: 'day', label: 'feat.setting.time.day' },
              { value: 'week', label: 'feat.setting.time.week' },
            ],
          },
        ]}
      />
      <RatioTabs />
    </Box>
  );
}

/** The nested tab set: model ratio settings (JSON), visual ratio settings, unset-ratio models. */
function RatioTabs() {
  const translate = useTranslate();
  const [tab, setTab] = useState(0);
  return (
    <SectionCard title="feat.setting.sec.ratio">
      <Tabs
        value={tab}
        onChange={(_, v: number) => setTab(v)}
        variant="scrollable"
        allowScrollButtonsMobile
        sx={{ mb: 2, borderBottom: 1, borderColor: 'divider' }}
      >
        <Tab label={translate('feat.setting.ratio.tab_json')} />
        <Tab label={translate('feat.setting.ratio.tab_visual')} data-testid="tab-visual" />
        <Tab label={translate('feat.setting.ratio.tab_unset')} />
      </Tabs>
      {tab === 0 && <RatioJson />}
      {tab === 1 && <RatioEditor />}
      {tab === 2 && <UnsetModels />}
    </SectionCard>
  );
}

function RatioJson() {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const { reload } = useOptions();
  const [confirm, setConfirm] = useState(false);
  const resetCall = useMutation({
    mutationFn: () => api().post('/api/option/rest_model_ratio', {}),
    onSuccess: async () => {
      notify('feat.setting.ratio.reset_done', { type: 'success' });
      await reload();
    },
    onError: notifyError,
  });
  const reset = () => {
    setConfirm(false);
    resetCall.mutate();
  };
  return (
    <Box sx={{ '& > .MuiCard-root': { border: 0 } }}>
      <OptionSection title="feat.setting.ratio.tab_json" fields={RATIO_JSON_KEYS.map(json)} />
      <Button color="error" variant="outlined" startIcon={<RestartAltIcon />} onClick={() => setConfirm(true)} disabled={resetCall.isPending}>
        {translate('feat.setting.ratio.reset')}
      </Button>
      <Confirm
        isOpen={confirm}
        title={translate('feat.setting.ratio.reset')}
        content={translate('feat.setting.ratio.reset_confirm')}
        onConfirm={reset}
        onClose={() => setConfirm(false)}
      />
    </Box>
  );
}

/** Clear logs before a time (default one month ago) → DELETE /api/log/?target_timestamp=. */
function ClearLogs() {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const dp = useGateway();
  const [when, setWhen] = useState(() => toDateTimeLocal(Math.floor(oneMonthAgo().getTime() / 1000)));
  const [confirm, setConfirm] = useState(false);
  const start = () => {
    if (!when || Number.isNaN(new Date(when).getTime())) return notify('feat.setting.log.need_time', { type: 'warning' });
    setConfirm(true);
  };
  // Through the data provider's clearLogs (DELETE /api/log/?target_timestamp=).
  const clearCall = useMutation({
    mutationFn: (ts: number) => dp.clearLogs(ts),
    onSuccess: ({ count }) => notify('feat.setting.log.cleared', { type: 'success', messageArgs: { count } }),
    onError: notifyError,
  });
  const clear = () => {
    setConfirm(false);
    clearCall.mutate(Math.floor(new Date(when).getTime() / 1000));
  };
  return (
    <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ mt: 2, alignItems: { sm: 'center' } }}>
      <TextField
        type="datetime-local"
        size="small"
        label={translate('feat.setting.log.time')}
        value={when}
        onChange={(e) => setWhen(e.target.value)}
        slotProps={{ inputLabel: { shrink: true } }}
        sx={{ width: { sm: 260 } }}
        name="clear_logs_time"
      />
      <Button variant="outlined" color="warning" startIcon={<DeleteSweepIcon />} onClick={start} disabled={clearCall.isPending}>
        {translate('feat.setting.log.clear')}
      </Button>
      <Confirm
        isOpen={confirm}
        title={translate('feat.setting.log.clear')}
        content={translate('feat.setting.log.clear_confirm')}
        onConfirm={clear}
        onClose={() => setConfirm(false)}
      />
    </Stack>
  );
}
