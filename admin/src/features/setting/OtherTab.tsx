import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { Box, Button, Link, Stack } from '@mui/material';
import SystemUpdateIcon from '@mui/icons-material/SystemUpdateAltOutlined';
import { useNotify, useTranslate } from 'react-admin';
import { useStatus } from '../../lib/StatusContext';
import { api } from '../../lib/http';
import { formatTimestamp } from '../../resources/shared/format';
import { InfoLine, OptionSection, SectionCard } from './OptionSection';

/** Other settings: system info with update check, notice, name, logo, home page, about, footer. */
export function OtherTab() {
  return (
    <Box>
      <SystemInfo />
      <OptionSection title="feat.setting.sec.update" fields={[{ key: 'UpdateCheckUrl', type: 'text', help: 'feat.setting.help.update_feed' }]} />
      <OptionSection title="feat.setting.sec.notice" fields={[{ key: 'Notice', type: 'textarea', help: 'feat.setting.help.markdown' }]} />
      <OptionSection
        title="feat.setting.sec.content"
        fields={[
          { key: 'SystemName', type: 'text' },
          { key: 'Logo', type: 'text', help: 'feat.setting.help.logo' },
          { key: 'HomePageContent', type: 'textarea', help: 'feat.setting.help.home' },
          { key: 'About', type: 'textarea', help: 'feat.setting.help.markdown' },
          { key: 'Footer', type: 'textarea', rows: 2, help: 'feat.setting.help.footer' },
        ]}
      />
    </Box>
  );
}

function SystemInfo() {
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const [latest, setLatest] = useState<{ tag: string; url: string } | null>(null);
  const version = String(status.version ?? '') || '-';
  // The server compares with the configured release feed (UpdateCheckUrl); none set: no check.
  const checkCall = useMutation({
    mutationFn: async () => {
      const res = await api().raw<{ latest: string; url: string; newer: boolean }>('GET', '/api/status/update');
      if (!res.success || !res.data) throw new Error(res.message);
      return res.data;
    },
    onSuccess: (data) => {
      setLatest({ tag: data.latest, url: data.url });
      if (data.newer) notify('feat.setting.other.new_version', { type: 'info', messageArgs: { tag: data.latest } });
      else notify('feat.setting.other.up_to_date', { type: 'success' });
    },
    onError: () => notify('feat.setting.other.update_fail', { type: 'error' }),
  });
  const busy = checkCall.isPending;
  const check = () => checkCall.mutate();
  return (
    <SectionCard title="feat.setting.sec.info">
      <InfoLine label="feat.setting.other.version" value={version} />
      <InfoLine label="feat.setting.other.start_time" value={formatTimestamp(Number(status.start_time ?? 0))} />
      {latest && (
        <InfoLine
          label="feat.setting.other.latest"
          value={
            latest.url ? (
              <Link href={latest.url} target="_blank" rel="noreferrer">
                {latest.tag}
              </Link>
            ) : (
              latest.tag
            )
          }
        />
      )}
      {status.update_check ? (
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ mt: 1.5 }}>
          <Button variant="outlined" startIcon={<SystemUpdateIcon />} onClick={check} disabled={busy} sx={{ whiteSpace: 'nowrap', flexShrink: 0 }}>
            {translate('feat.setting.other.check')}
          </Button>
        </Stack>
      ) : null}
    </SectionCard>
  );
}
