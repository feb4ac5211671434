import { useCallback, useMemo } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Alert, Box, Card, CircularProgress, Tab, Tabs } from '@mui/material';
import { Title, useTranslate } from 'react-admin';
import { useSearchParams } from 'react-router-dom';
import { errorText } from '../../lib/http';
import { isAdmin, isRoot } from '../../lib/storage';
import { useStoredUser } from '../../lib/useUser';
import { OptionsCtx } from './OptionSection';
import { OperationTab } from './OperationTab';
import { RateLimitTab } from './RateLimitTab';
import { ModelsTab } from './ModelsTab';
import { SystemTab } from './SystemTab';
import { OtherTab } from './OtherTab';
import { apiQuery } from '../../resources/shared/hooks';
import { toOptionMap, visibleTabs, type SettingTab } from './settingOptions';

const TAB_VIEWS: Record<SettingTab, () => React.JSX.Element> = {
  operation: OperationTab,
  ratelimit: RateLimitTab,
  models: ModelsTab,
  system: SystemTab,
  other: OtherTab,
};

/** /setting: the tab from ?tab= (default operation); the tabs are shown to admins only. */
export function SettingPage() {
  const translate = useTranslate();
  const user = useStoredUser();
  const [params, setParams] = useSearchParams();
  const tabs = useMemo(() => visibleTabs(isAdmin(user), isRoot(user)), [user]);
  const requested = (params.get('tab') ?? 'operation') as SettingTab;
  const tab = tabs.includes(requested) ? requested : tabs[0];
  // The options shown stay until a reload answers; a failed load shows its error instead.
  const query = useQuery({ ...apiQuery('options', '/api/option/', toOptionMap), enabled: tabs.length > 0 });
  const options = query.data ?? null;
  const error = query.error ? errorText(query.error, (k, o) => translate(k, o)) : undefined;
  const { refetch } = query;
  const reload = useCallback(async () => {
    await refetch();
  }, [refetch]);

  const ctx = useMemo(() => ({ options: options ?? {}, reload }), [options, reload]);
  const View = tab ? TAB_VIEWS[tab] : null;
  return (
    <Box sx={{ maxWidth: 1400, mx: 'auto', width: '100%' }} data-testid="setting-page">
      <Title title={translate('app.menu.setting')} />
      {!tabs.length ? (
        <Alert severity="info">{translate('feat.setting.no_tabs')}</Alert>
      ) : (
        <>
          <Card variant="outlined" sx={{ mb: 2 }}>
            <Tabs value={tab} onChange={(_, v: SettingTab) => setParams({ tab: v })} variant="scrollable" allowScrollButtonsMobile>
              {tabs.map((t) => (
                <Tab key={t} value={t} label={translate(`feat.setting.tab.${t}`)} data-testid={`tab-${t}`} />
              ))}
            </Tabs>
          </Card>
          {error ? (
            <Alert severity="error">{error}</Alert>
          ) : !options ? (
            <Box sx={{ textAlign: 'center', py: 6 }}>
              <CircularProgress />
            </Box>
          ) : (
            <OptionsCtx.Provider value={ctx}>{View && <View key={tab} />}</OptionsCtx.Provider>
          )}
        </>
      )}
    </Box>
  );
}
