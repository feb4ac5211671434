import { useState, type MouseEvent } from 'react';
import { Link as RouterLink, useLocation } from 'react-router-dom';
import { useLocaleState, useLogout, useTheme, useTranslate } from 'react-admin';
import { AppBar, Avatar, Box, Button, Chip, IconButton, ListItemIcon, Menu, MenuItem, Toolbar, Tooltip, Typography } from '@mui/material';
import DarkModeIcon from '@mui/icons-material/DarkMode';
import LightModeIcon from '@mui/icons-material/LightMode';
import TranslateIcon from '@mui/icons-material/Translate';
import LogoutIcon from '@mui/icons-material/Logout';
import MenuIcon from '@mui/icons-material/Menu';
import CheckIcon from '@mui/icons-material/Check';
import { useStatus } from '../lib/StatusContext';
import { useStoredUser } from '../lib/useUser';
import { KEYS, store } from '../lib/storage';
import { LOCALES } from '../i18n';
import { useIsMobile } from './useIsMobile';

export interface NavEntry {
  key: string;
  to: string;
  external?: boolean;
}

/** Top bar entries: home, console, pricing, docs (only when configured, new tab), about. */
export function useNavEntries(): NavEntry[] {
  const { status } = useStatus();
  const entries: NavEntry[] = [
    { key: 'home', to: '/' },
    { key: 'console', to: status.enable_data_export ? '/detail' : '/token' },
    { key: 'pricing', to: '/pricing' },
  ];
  if (status.docs_link) entries.push({ key: 'docs', to: String(status.docs_link), external: true });
  entries.push({ key: 'about', to: '/about' });
  return entries;
}

export function isNewYear(d: Date = new Date()): boolean {
  return d.getMonth() === 0 && d.getDate() === 1;
}

function ThemeSwitch() {
  const translate = useTranslate();
  const [theme, setTheme] = useTheme();
  const dark = theme === 'dark';
  const toggle = () => {
    const next = dark ? 'light' : 'dark';
    store().setItem(KEYS.themeMode, next);
    setTheme(next);
  };
  return (
    <Tooltip title={translate(dark ? 'app.nav.theme_light' : 'app.nav.theme_dark')}>
      <IconButton color="inherit" onClick={toggle} aria-label="theme" data-testid="theme-switch">
        {dark ? <LightModeIcon /> : <DarkModeIcon />}
      </IconButton>
    </Tooltip>
  );
}

function LanguageMenu() {
  const translate = useTranslate();
  const [locale, setLocale] = useLocaleState();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  return (
    <>
      <Tooltip title={translate('app.nav.language')}>
        <IconButton color="inherit" onClick={(e: MouseEvent<HTMLElement>) => setAnchor(e.currentTarget)} aria-label="language" data-testid="language-menu">
          <TranslateIcon />
        </IconButton>
      </Tooltip>
      <Menu anchorEl={anchor} open={!!anchor} onClose={() => setAnchor(null)}>
        {LOCALES.map((l) => (
          <MenuItem
            key={l.locale}
            selected={locale === l.locale}
            onClick={() => {
              setAnchor(null);
              setLocale(l.locale);
            }}
          >
            <ListItemIcon>{locale === l.locale ? <CheckIcon fontSize="small" /> : null}</ListItemIcon>
            {l.name}
          </MenuItem>
        ))}
      </Menu>
    </>
  );
}

function UserMenu({ name }: { name: string }) {
  const translate = useTranslate();
  const logout = useLogout();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  return (
    <>
      <Button color="inherit" onClick={(e) => setAnchor(e.currentTarget)} sx={{ textTransform: 'none', ml: 0.5 }} data-testid="user-menu">
        <Avatar sx={{ width: 28, height: 28, mr: 1, fontSize: 14, bgcolor: 'secondary.main' }}>{name.slice(0, 1).toUpperCase()}</Avatar>
        <Box component="span" sx={{ display: { xs: 'none', sm: 'inline' } }}>
          {name}
        </Box>
      </Button>
      <Menu anchorEl={anchor} open={!!anchor} onClose={() => setAnchor(null)}>
        <MenuItem
          onClick={() => {
            setAnchor(null);
            void logout();
          }}
          data-testid="logout"
        >
          <ListItemIcon>
            <LogoutIcon fontSize="small" />
          </ListItemIcon>
          {translate('app.nav.logout')}
        </MenuItem>
      </Menu>
    </>
  );
}

export function TopBar({ onOpenMenu }: { onOpenMenu?: () => void }) {
  const translate = useTranslate();
  const { status } = useStatus();
  const user = useStoredUser();
  const mobile = useIsMobile();
  const location = useLocation();
  const nav = useNavEntries();
  const name = status.system_name || translate('app.name');
  const isActive = (to: string) => (to === '/' ? location.pathname === '/' : location.pathname.startsWith(to));

  return (
    <AppBar position="sticky" color="default" elevation={0} sx={{ borderBottom: 1, borderColor: 'divider', bgcolor: 'background.paper' }}>
      <Toolbar variant="dense" sx={{ gap: 0.5, minHeight: 56 }}>
        {mobile && onOpenMenu ? (
          <IconButton edge="start" color="inherit" onClick={onOpenMenu} aria-label={translate('app.nav.menu')}>
            <MenuIcon />
          </IconButton>
        ) : null}
        {/* On a phone the name and badges shrink (ellipsis) rather than widen the page. */}
        <Box
          component={RouterLink}
          to="/"
          sx={{ display: 'flex', alignItems: 'center', color: 'inherit', textDecoration: 'none', mr: { xs: 1, sm: 2 }, minWidth: 0 }}
        >
          {status.logo ? <Box component="img" src={String(status.logo)} alt="" sx={{ width: 28, height: 28, borderRadius: 1, mr: 1 }} /> : null}
          <Typography noWrap sx={{ fontWeight: 700, fontSize: 18, letterSpacing: 0.2 }}>
            {name}
          </Typography>
        </Box>
        {status.self_use_mode_enabled ? <Chip size="small" color="info" label={translate('app.nav.self_use')} sx={{ mr: 1, minWidth: 0 }} /> : null}
        {status.demo_site_enabled ? <Chip size="small" color="warning" label={translate('app.nav.demo')} sx={{ mr: 1, minWidth: 0 }} /> : null}
        {!mobile && (
          <Box component="nav" sx={{ display: 'flex', gap: 0.5 }}>
            {nav.map((e) =>
              e.external ? (
                <Button key={e.key} color="inherit" href={e.to} target="_blank" rel="noreferrer" size="small" sx={{ minWidth: 0, px: 1.5 }}>
                  {translate(`app.nav.${e.key}`)}
                </Button>
              ) : (
                <Button
                  key={e.key}
                  component={RouterLink}
                  to={e.to}
                  size="small"
                  color={isActive(e.to) ? 'primary' : 'inherit'}
                  sx={{ minWidth: 0, px: 1.5, fontWeight: isActive(e.to) ? 700 : 400 }}
                >
                  {translate(`app.nav.${e.key}`)}
                </Button>
              ),
            )}
          </Box>
        )}
        <Box sx={{ flex: 1 }} />
        {isNewYear() ? (
          <Tooltip title={translate('app.nav.new_year')}>
            <Box component="span" role="img" aria-label="new year" sx={{ fontSize: 20, mx: 1 }}>
              🎉
            </Box>
          </Tooltip>
        ) : null}
        <ThemeSwitch />
        <LanguageMenu />
        {user ? (
          <UserMenu name={user.display_name || user.username} />
        ) : (
          <>
            <Button component={RouterLink} to="/login" size="small" variant="text" color="inherit" data-testid="nav-login">
              {translate('app.nav.login')}
            </Button>
            {!status.self_use_mode_enabled && !mobile ? (
              <Button component={RouterLink} to="/register" size="small" variant="contained" disableElevation data-testid="nav-register">
                {translate('app.nav.register')}
              </Button>
            ) : null}
          </>
        )}
      </Toolbar>
    </AppBar>
  );
}
