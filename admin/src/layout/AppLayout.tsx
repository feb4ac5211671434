import { Component, Suspense, useEffect, useState, type ErrorInfo, type ReactNode } from 'react';
import { Link as RouterLink, Navigate, useLocation } from 'react-router-dom';
import { Loading, TitlePortal, useLocaleState, useTranslate } from 'react-admin';
import { Alert, Box, Divider, Drawer, List, ListItemButton, ListItemText } from '@mui/material';
import { ThemeProvider, createTheme, type Theme } from '@mui/material/styles';
import { enUS, zhCN } from '@mui/material/locale';
import { TopBar, useNavEntries } from './TopBar';
import { SideMenu, sidebarHiddenOn } from './SideMenu';
import { Footer } from './Footer';
import { useIsMobile } from './useIsMobile';
import { useStatus } from '../lib/StatusContext';
import { useStoredUser } from '../lib/useUser';
import { KEYS, store } from '../lib/storage';

class Boundary extends Component<{ children: ReactNode; resetKey: string }, { error?: Error }> {
  state: { error?: Error } = {};
  static getDerivedStateFromError(error: Error) {
    return { error };
  }
  componentDidCatch(error: Error, info: ErrorInfo) {
    console.error(error, info.componentStack);
  }
  componentDidUpdate(prev: { resetKey: string }) {
    if (prev.resetKey !== this.props.resetKey && this.state.error) this.setState({ error: undefined });
  }
  render() {
    if (this.state.error) return <Alert severity="error" sx={{ m: 2 }}>{`Error: ${this.state.error.message}`}</Alert>;
    return this.props.children;
  }
}

/** Initial sidebar state: the user's remembered choice, else the site default (default_collapse_sidebar). */
export function initialCollapsed(): boolean {
  const mine = store().getItem(KEYS.sidebarCollapsed);
  if (mine === 'true' || mine === 'false') return mine === 'true';
  return store().getItem(KEYS.collapse) === 'true';
}

/** Global guard: every path goes to /setup while the server says setup is not done. */
function SetupGuard({ children }: { children: ReactNode }) {
  const { status, loaded } = useStatus();
  const { pathname } = useLocation();
  if (loaded && status.setup === false && pathname !== '/setup') return <Navigate to="/setup" replace />;
  return <>{children}</>;
}

function StatusBanner() {
  const translate = useTranslate();
  const { error } = useStatus();
  if (!error) return null;
  return (
    <Alert severity="error" sx={{ borderRadius: 0 }} data-testid="status-error">
      {translate(`app.status.${error}`)}
    </Alert>
  );
}

/** The top bar entries inside the mobile drawer (the bar itself has no room for them). */
function MobileNav({ onNavigate }: { onNavigate: () => void }) {
  const translate = useTranslate();
  const entries = useNavEntries();
  return (
    <>
      <List dense sx={{ width: 200 }} data-testid="mobile-nav">
        {entries.map((e) =>
          e.external ? (
            <ListItemButton key={e.key} component="a" href={e.to} target="_blank" rel="noreferrer" onClick={onNavigate}>
              <ListItemText primary={translate(`app.nav.${e.key}`)} />
            </ListItemButton>
          ) : (
            <ListItemButton key={e.key} component={RouterLink} to={e.to} onClick={onNavigate}>
              <ListItemText primary={translate(`app.nav.${e.key}`)} />
            </ListItemButton>
          ),
        )}
      </List>
      <Divider />
    </>
  );
}

/**
 * MUI's built-in texts (pagination's "rows per page" and page-button titles, autocomplete's "no
 * options", …) in the console's language: the theme gets MUI's locale for it.
 */
export function MuiLocale({ children }: { children: ReactNode }) {
  const [locale] = useLocaleState();
  const pack = locale === 'en' ? enUS : zhCN;
  return <ThemeProvider theme={(outer: Theme) => createTheme(outer, pack)}>{children}</ThemeProvider>;
}

/** The console frame: top bar, side menu (not on home/chat/setup, not on mobile, only when logged in), content, footer. */
export function AppLayout({ children }: { children?: ReactNode }) {
  const { pathname } = useLocation();
  const user = useStoredUser();
  const mobile = useIsMobile();
  const [collapsed, setCollapsed] = useState(initialCollapsed);
  const { status } = useStatus();
  // Until the user picks, follow the site default once the status arrives.
  useEffect(() => {
    if (store().getItem(KEYS.sidebarCollapsed) === null && status.default_collapse_sidebar !== undefined) setCollapsed(!!status.default_collapse_sidebar);
  }, [status.default_collapse_sidebar]);
  const [mobileOpen, setMobileOpen] = useState(false);
  const showSider = !!user && !mobile && !sidebarHiddenOn(pathname);
  const toggle = () => {
    setCollapsed((c) => {
      store().setItem(KEYS.sidebarCollapsed, String(!c));
      return !c;
    });
  };
  const bare = sidebarHiddenOn(pathname);
  return (
    <MuiLocale>
      <Box sx={{ display: 'flex', flexDirection: 'column', minHeight: '100vh', bgcolor: 'background.default' }}>
        <TopBar onOpenMenu={() => setMobileOpen(true)} />
        <StatusBanner />
        <Box sx={{ display: 'flex', flex: 1, minHeight: 0 }}>
          {showSider ? <SideMenu user={user} collapsed={collapsed} onToggle={toggle} /> : null}
          {mobile ? (
            <Drawer open={mobileOpen} onClose={() => setMobileOpen(false)}>
              <MobileNav onNavigate={() => setMobileOpen(false)} />
              {user ? <SideMenu user={user} collapsed={false} onNavigate={() => setMobileOpen(false)} /> : null}
            </Drawer>
          ) : null}
          <Box sx={{ flex: 1, minWidth: 0, display: 'flex', flexDirection: 'column', minHeight: 'calc(100vh - 57px)' }}>
            <Box component="main" id="main-content" sx={{ flex: 1, p: sidebarHiddenOn(pathname) ? 0 : { xs: 1, sm: 2 } }}>
              {/* Pages without the frame's padding (chat) still get a padded title. */}
              <Box
                sx={{
                  '& #react-admin-title': { fontSize: 18, fontWeight: 600, mb: 1, ...(bare ? { px: { xs: 1, sm: 2 }, pt: 1 } : {}) },
                  '& #react-admin-title:empty': { display: 'none' },
                }}
              >
                <TitlePortal variant="h6" />
              </Box>
              <Boundary resetKey={pathname}>
                <SetupGuard>
                  <Suspense fallback={<Loading />}>{children}</Suspense>
                </SetupGuard>
              </Boundary>
            </Box>
            <Footer />
          </Box>
        </Box>
      </Box>
    </MuiLocale>
  );
}
