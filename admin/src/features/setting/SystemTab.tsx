import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { Box, Button, Chip, Stack, TextField, Typography } from '@mui/material';
import AddIcon from '@mui/icons-material/Add';
import CloudDownloadIcon from '@mui/icons-material/CloudDownloadOutlined';
import { useNotify, useTranslate } from 'react-admin';
import { OptionSection, type FieldDef } from './OptionSection';
import { checkWhitelistDomain, isHttpUrl, isJsonText, oidcEndpoints, stripTrailingSlash, type OptionMap } from './settingOptions';

const sw = (key: string, extra: Partial<FieldDef> = {}): FieldDef => ({ key, type: 'switch', ...extra });
const text = (key: string, extra: Partial<FieldDef> = {}): FieldDef => ({ key, type: 'text', ...extra });
const secret = (key: string): FieldDef => ({ key, type: 'secret' });
const num = (key: string): FieldDef => ({ key, type: 'number' });

const trim =
  (...keys: string[]) =>
  (v: OptionMap) => {
    const out = { ...v };
    for (const k of keys) if (k in out) out[k] = stripTrailingSlash(out[k] ?? '');
    return out;
  };

/** System settings (root): general, payment, login, whitelist, SMTP, OIDC, OAuth providers, bot-check, outbound fetch guard. */
export function SystemTab() {
  return (
    <Box>
      <OptionSection
        title="feat.setting.sec.sys_general"
        fields={[text('ServerAddress', { help: 'feat.setting.help.server_address' })]}
        transform={trim('ServerAddress')}
      />
      <OptionSection
        title="feat.setting.sec.payment"
        fields={[
          text('PayAddress'),
          text('EpayId'),
          secret('EpayKey'),
          num('Price'),
          num('MinTopUp'),
          text('CustomCallbackAddress'),
          { key: 'TopupGroupRatio', type: 'textarea', rows: 4 },
        ]}
        transform={trim('PayAddress', 'CustomCallbackAddress')}
        validate={(v, stored) => {
          if (!isJsonText(v.TopupGroupRatio ?? '')) return 'feat.setting.sys.topup_json';
          if ((v.PayAddress ?? '') !== '' && !(stored.ServerAddress ?? '').trim()) return 'feat.setting.sys.need_server';
          return null;
        }}
      />
      <OptionSection
        title="feat.setting.sec.login"
        testId="sec-login"
        fields={[
          sw('PasswordLoginEnabled', { confirmOff: 'feat.setting.sys.password_off_confirm' }),
          sw('PasswordRegisterEnabled'),
          sw('EmailVerificationEnabled'),
          sw('RegisterEnabled'),
        ]}
      />
      <OptionSection
        title="feat.setting.sec.whitelist"
        fields={[sw('EmailDomainRestrictionEnabled'), sw('EmailAliasRestrictionEnabled')]}
        extraKeys={['EmailDomainWhitelist']}
        extra={(values, set) => <WhitelistEditor value={values.EmailDomainWhitelist ?? ''} onChange={(v) => set('EmailDomainWhitelist', v)} />}
      />
      <OptionSection
        title="feat.setting.sec.smtp"
        fields={[sw('SMTPSSLEnabled'), text('SMTPServer'), num('SMTPPort'), text('SMTPAccount'), text('SMTPFrom'), secret('SMTPToken')]}
      />
      <OptionSection
        title="feat.setting.sec.oidc"
        fields={[
          sw('oidc.enabled'),
          text('oidc.client_id'),
          secret('oidc.client_secret'),
          text('oidc.authorization_endpoint'),
          text('oidc.token_endpoint'),
          text('oidc.user_info_endpoint'),
        ]}
        extraKeys={['oidc.well_known']}
        extra={(values, set) => <OidcWellKnown value={values['oidc.well_known'] ?? ''} set={set} />}
        validate={(v) => ((v['oidc.well_known'] ?? '') !== '' && !isHttpUrl(v['oidc.well_known'] ?? '') ? 'feat.setting.sys.oidc_url' : null)}
      />
      <OptionSection title="feat.setting.sec.github" fields={[sw('GitHubOAuthEnabled'), text('GitHubClientId'), secret('GitHubClientSecret')]} />
      <OptionSection title="feat.setting.sec.linuxdo" fields={[sw('LinuxDOOAuthEnabled'), text('LinuxDOClientId'), secret('LinuxDOClientSecret')]} />
      <OptionSection
        title="feat.setting.sec.wechat"
        fields={[sw('WeChatAuthEnabled'), text('WeChatServerAddress'), secret('WeChatServerToken'), text('WeChatAccountQRCodeImageURL')]}
        transform={trim('WeChatServerAddress')}
      />
      <OptionSection
        title="feat.setting.sec.telegram"
        fields={[sw('TelegramOAuthEnabled'), secret('TelegramBotToken'), text('TelegramBotName'), text('TelegramAdminChatId')]}
      />
      <OptionSection
        title="feat.setting.sec.security"
        testId="sec-security"
        fields={[sw('AdminTwoFactorRequired'), num('SecureVerificationWindowSeconds'), sw('PasskeyLoginEnabled')]}
      />
      <OptionSection title="feat.setting.sec.turnstile" fields={[sw('TurnstileCheckEnabled'), secret('TurnstileSiteKey'), secret('TurnstileSecretKey')]} />
      <OptionSection
        title="feat.setting.sec.fetch"
        testId="sec-fetch"
        fields={[
          sw('fetch_setting.ssrf_protection_enabled', { help: 'feat.setting.help.ssrf', confirmOff: 'feat.setting.sys.ssrf_off_confirm' }),
          sw('fetch_setting.allow_private_ip_enabled', { help: 'feat.setting.help.private_ip' }),
          sw('fetch_setting.allow_link_local_enabled', { help: 'feat.setting.help.link_local' }),
          text('fetch_setting.allowed_ports', { help: 'feat.setting.help.ports' }),
          { key: 'fetch_setting.domain_allow_list', type: 'textarea', rows: 3, help: 'feat.setting.help.domain_list' },
          { key: 'fetch_setting.domain_deny_list', type: 'textarea', rows: 3, help: 'feat.setting.help.domain_list' },
          { key: 'fetch_setting.ip_allow_list', type: 'textarea', rows: 3, help: 'feat.setting.help.ip_list' },
          { key: 'fetch_setting.ip_deny_list', type: 'textarea', rows: 3, help: 'feat.setting.help.ip_list' },
        ]}
      />
    </Box>
  );
}

/** Comma-separated whitelist as chips with an add field (domain pattern, no duplicates). */
function WhitelistEditor({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const [input, setInput] = useState('');
  const list = value
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean);
  const add = () => {
    const d = input.trim().toLowerCase();
    if (!d) return;
    const err = checkWhitelistDomain(list, d);
    if (err === 'format') return notify('feat.setting.sys.domain_format', { type: 'warning', messageArgs: { host: 'example.com' } });
    if (err === 'duplicate') return notify('feat.setting.sys.domain_duplicate', { type: 'warning' });
    onChange([...list, d].join(','));
    setInput('');
  };
  return (
    <Box sx={{ mt: 1.5 }}>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
        {translate('feat.setting.f.EmailDomainWhitelist')}
      </Typography>
      <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 0.75, mb: 1.5 }} data-testid="whitelist">
        {list.map((d) => (
          <Chip key={d} label={d} size="small" onDelete={() => onChange(list.filter((x) => x !== d).join(','))} />
        ))}
      </Box>
      <Stack direction="row" spacing={1}>
        <TextField
          size="small"
          value={input}
          name="whitelist_domain"
          placeholder="example.com"
          onChange={(e) => setInput(e.target.value)}
          onKeyDown={(e) => e.key === 'Enter' && add()}
        />
        <Button startIcon={<AddIcon />} variant="outlined" onClick={add}>
          {translate('feat.setting.sys.add_domain')}
        </Button>
      </Stack>
    </Box>
  );
}

/** The well-known URL and a fetch (from the browser) that fills the three endpoints. */
function OidcWellKnown({ value, set }: { value: string; set: (k: string, v: string) => void }) {
  const translate = useTranslate();
  const notify = useNotify();
  // The discovery document is read by the browser (the server never fetches an admin-typed URL).
  const fetchCall = useMutation({
    mutationFn: async (url: string) => {
      const res = await window.fetch(url, { headers: { Accept: 'application/json' } });
      const eps = oidcEndpoints(res.ok ? await res.json() : null);
      if (!eps) throw new Error('no endpoints');
      return eps;
    },
    onSuccess: (eps) => {
      set('oidc.authorization_endpoint', eps.authorization_endpoint);
      set('oidc.token_endpoint', eps.token_endpoint);
      set('oidc.user_info_endpoint', eps.user_info_endpoint);
      notify('feat.setting.sys.oidc_ok', { type: 'success' });
    },
    onError: () => notify('feat.setting.sys.oidc_fail', { type: 'error' }),
  });
  const busy = fetchCall.isPending;
  const fetchConfig = () => {
    if (!isHttpUrl(value)) return notify('feat.setting.sys.oidc_url', { type: 'warning' });
    fetchCall.mutate(value.trim());
  };
  return (
    <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ mt: 2 }}>
      <TextField
        size="small"
        fullWidth
        name="oidc.well_known"
        label={translate('feat.setting.f.oidc_well_known')}
        value={value}
        onChange={(e) => set('oidc.well_known', e.target.value)}
      />
      <Button variant="outlined" startIcon={<CloudDownloadIcon />} onClick={fetchConfig} disabled={busy} sx={{ whiteSpace: 'nowrap', flexShrink: 0 }}>
        {translate('feat.setting.sys.oidc_fetch')}
      </Button>
    </Stack>
  );
}
