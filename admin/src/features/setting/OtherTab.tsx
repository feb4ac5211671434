import { useState } from 'react';
import { Box, Button, Link, Stack, TextField } from '@mui/material';
import SystemUpdateIcon from '@mui/icons-material/SystemUpdateAltOutlined';
import { useNotify, useTranslate } from 'react-admin';
import { useStatus } from '../../lib/StatusContext';
import { store } from '../../lib/storage';
import { formatTimestamp } from '../../resources/shared/format';
import { InfoLine, OptionSection, SectionCard } from './OptionSection';
import { isNewerVersion } from './settingOptions';

/** Where the update check looks (stored locally, editable here). */
export const RELEASE_URL_KEY = 'setting_release_url';
export const DEFAULT_RELEASE_URL = 'https://api.github.com/repos/QuantumNous/new-api/releases/latest';

/** Other settings: system info with update check, notice, name, logo, home page, about, footer. */
export function OtherTab() {
  return (
    <Box>
      <SystemInfo />
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
  const [url, setUrl] = useState(() => store().getItem(RELEASE_URL_KEY) || DEFAULT_RELEASE_URL);
  const [latest, setLatest] = useState<{ tag: string; url: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const version = String(status.version ?? '') || '-';
  const check = async () => {
    store().setItem(RELEASE_URL_KEY, url.trim());
    setBusy(true);
    try {
      const res = await window.fetch(url.trim(), { headers: { Accept: 'application/json' } });
      if (!res.ok) throw new Error(String(res.status));
      const data = (await res.json()) as { tag_name?: string; html_url?: string };
      const tag = String(data.tag_name ?? '');
      if (!tag) throw new Error('no tag');
      setLatest({ tag, url: String(data.html_url ?? '') });
      if (isNewerVersion(version, tag)) notify('feat.setting.other.new_version', { type: 'info', messageArgs: { tag } });
      else notify('feat.setting.other.up_to_date', { type: 'success' });
    } catch {
      notify('feat.setting.other.update_fail', { type: 'error' });
    } finally {
      setBusy(false);
    }
  };
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
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ mt: 1.5 }}>
        <TextField
          size="small"
          fullWidth
          name="release_url"
          label={translate('feat.setting.other.release_url')}
          value={url}
          onChange={(e) => setUrl(e.target.value)}
        />
        <Button variant="outlined" startIcon={<SystemUpdateIcon />} onClick={check} disabled={busy} sx={{ whiteSpace: 'nowrap', flexShrink: 0 }}>
          {translate('feat.setting.other.check')}
        </Button>
      </Stack>
    </SectionCard>
  );
}
