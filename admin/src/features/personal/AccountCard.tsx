import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useTranslate } from 'react-admin';
import {
  Avatar,
  Box,
  Button,
  Card,
  CardContent,
  Chip,
  CircularProgress,
  Divider,
  IconButton,
  Stack,
  Tooltip,
  Typography,
  alpha,
  useTheme,
} from '@mui/material';
import RefreshIcon from '@mui/icons-material/Refresh';
import ExpandMoreIcon from '@mui/icons-material/ExpandMore';
import ExpandLessIcon from '@mui/icons-material/ExpandLess';
import { useGateway } from '../../resources/shared/api';
import { ColorTag } from '../../resources/shared/ColorTag';
import { useCopy } from '../../resources/shared/copy';
import { formatQuota, stringColor } from '../../resources/shared/format';
import { LOAD_ONCE, useDisplaySettings } from '../../resources/shared/hooks';
import { avatarLetter, MODELS_COLLAPSED, roleInfo, visibleModels } from './personalSettings';
import type { SelfUser } from './useSelf';

function Stat({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <Box sx={{ minWidth: 96, flex: 1 }}>
      <Typography variant="caption" color="text.secondary">
        {label}
      </Typography>
      <Typography variant="h6" sx={{ fontWeight: 600, lineHeight: 1.3 }} data-testid={testId}>
        {value}
      </Typography>
    </Box>
  );
}

/** Account card: avatar, role tag, id, group, balance, used amount, request count. */
export function AccountCard({ self, loading, onRefresh }: { self: SelfUser | null; loading: boolean; onRefresh: () => void }) {
  const translate = useTranslate();
  const display = useDisplaySettings();
  const theme = useTheme();
  const role = roleInfo(Number(self?.role ?? 1));
  const name = self?.display_name || self?.username || '';
  return (
    <Card variant="outlined" data-testid="personal-account">
      <CardContent>
        <Stack direction="row" spacing={2} sx={{ alignItems: 'center' }}>
          <Avatar sx={{ width: 56, height: 56, bgcolor: alpha(theme.palette.primary.main, 0.15), color: 'primary.main', fontSize: 26, fontWeight: 600 }}>
            {avatarLetter(name)}
          </Avatar>
          <Box sx={{ flex: 1, minWidth: 0 }}>
            <Stack direction="row" spacing={1} sx={{ alignItems: 'center', flexWrap: 'wrap', rowGap: 0.5 }}>
              <Typography variant="h6" noWrap sx={{ maxWidth: '100%' }}>
                {name}
              </Typography>
              <ColorTag tone={role.tone} label={translate(role.key)} data-testid="personal-role" />
            </Stack>
            <Stack direction="row" spacing={1} sx={{ mt: 0.5, flexWrap: 'wrap', rowGap: 0.5 }}>
              <ColorTag tone="grey" label={`${translate('feat.personal.account.id')}: ${self?.id ?? '-'}`} />
              <ColorTag
                tone={stringColor(String(self?.group ?? 'default'))}
                label={`${translate('feat.personal.account.group')}: ${self?.group ?? 'default'}`}
              />
            </Stack>
          </Box>
          <Tooltip title={translate('feat.personal.refresh')}>
            <span>
              <IconButton onClick={onRefresh} disabled={loading} aria-label={translate('feat.personal.refresh')}>
                {loading ? <CircularProgress size={20} /> : <RefreshIcon />}
              </IconButton>
            </span>
          </Tooltip>
        </Stack>
        <Divider sx={{ my: 2 }} />
        <Stack direction="row" sx={{ flexWrap: 'wrap', rowGap: 1.5, columnGap: 2 }}>
          <Stat label={translate('feat.personal.account.balance')} value={formatQuota(self?.quota ?? 0, display)} testId="personal-balance" />
          <Stat label={translate('feat.personal.account.used')} value={formatQuota(self?.used_quota ?? 0, display)} />
          <Stat label={translate('feat.personal.account.requests')} value={String(Number(self?.request_count ?? 0))} />
        </Stack>
      </CardContent>
    </Card>
  );
}

const NO_MODELS: string[] = [];

/** Available models: the first 10, then expand to all; clicking a name copies it. */
export function ModelsCard() {
  const translate = useTranslate();
  const { copy, dialog } = useCopy();
  const dp = useGateway();
  const userModels = useQuery({ queryKey: ['gateway', 'userModels'], queryFn: () => dp.userModels().then((r) => r.data), ...LOAD_ONCE });
  // null while loading; a failed load shows the empty list.
  const models = userModels.data ?? (userModels.isError ? NO_MODELS : null);
  const [expanded, setExpanded] = useState(false);
  const shown = visibleModels(models ?? [], expanded);
  return (
    <Card variant="outlined" data-testid="personal-models">
      <CardContent>
        <Stack direction="row" sx={{ alignItems: 'baseline', justifyContent: 'space-between', mb: 1.5, flexWrap: 'wrap' }}>
          <Typography variant="h6">{translate('feat.personal.models.title')}</Typography>
          <Typography variant="caption" color="text.secondary">
            {translate('feat.personal.models.hint')}
          </Typography>
        </Stack>
        {models === null ? (
          <CircularProgress size={20} />
        ) : models.length === 0 ? (
          <Typography variant="body2" color="text.secondary">
            {translate('feat.personal.models.empty')}
          </Typography>
        ) : (
          <>
            <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 1 }}>
              {shown.map((m) => (
                <Chip
                  key={m}
                  label={m}
                  size="small"
                  variant="outlined"
                  onClick={() => void copy(m)}
                  sx={{ fontFamily: 'monospace' }}
                  data-testid="personal-model"
                />
              ))}
            </Box>
            {models.length > MODELS_COLLAPSED ? (
              <Button
                size="small"
                sx={{ mt: 1 }}
                onClick={() => setExpanded((e) => !e)}
                endIcon={expanded ? <ExpandLessIcon /> : <ExpandMoreIcon />}
                data-testid="personal-models-toggle"
              >
                {expanded ? translate('feat.personal.models.less') : translate('feat.personal.models.more', { n: models.length })}
              </Button>
            ) : null}
          </>
        )}
      </CardContent>
      {dialog}
    </Card>
  );
}
