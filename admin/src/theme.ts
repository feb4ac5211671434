import { defaultDarkTheme, defaultLightTheme, type RaThemeOptions } from 'react-admin';
import { deepMerge } from './lib/merge';

const shared: RaThemeOptions = {
  shape: { borderRadius: 8 },
  typography: {
    fontFamily: ['-apple-system', 'BlinkMacSystemFont', '"Segoe UI"', 'Roboto', '"PingFang SC"', '"Microsoft YaHei"', '"WenQuanYi Zen Hei"', 'sans-serif'].join(
      ',',
    ),
  },
  components: {
    MuiButton: { defaultProps: { disableElevation: true }, styleOverrides: { root: { textTransform: 'none' } } },
    MuiAppBar: { styleOverrides: { colorDefault: { backgroundImage: 'none' } } },
    // Confirm dialogs: the cancel button is a plain text button (react-admin gives it a warning icon).
    // Every list table scrolls inside its card (a visible bar) instead of widening the page.
    RaDataTable: { styleOverrides: { root: { '& .RaDataTable-tableWrapper': { overflowX: 'auto' } } } },
    RaConfirm: { styleOverrides: { root: { '& .MuiDialogActions-root .MuiButton-root:not(.ra-confirm) .MuiButton-startIcon': { display: 'none' } } } },
  } as RaThemeOptions['components'],
};

export const lightTheme: RaThemeOptions = deepMerge<RaThemeOptions>(defaultLightTheme, shared, {
  palette: { mode: 'light', primary: { main: '#1f6feb' }, secondary: { main: '#0e9f6e' }, background: { default: '#f6f7f9' } },
});

export const darkTheme: RaThemeOptions = deepMerge<RaThemeOptions>(defaultDarkTheme, shared, {
  palette: { mode: 'dark', primary: { main: '#58a6ff' }, secondary: { main: '#3fb950' } },
});
