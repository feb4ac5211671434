import { useState } from 'react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { Admin, CustomRoutes, localStorageStore, type I18nProvider, type Store } from 'react-admin';
import { BrowserRouter, Navigate, Route, useParams } from 'react-router-dom';
import { dataProvider } from './providers/dataProvider';
import { authProvider } from './providers/authProvider';
import { renderResources } from './resources';
import { AppLayout } from './layout/AppLayout';
import { StatusProvider } from './lib/StatusContext';
import { lightTheme, darkTheme } from './theme';
import { KEYS, store as local } from './lib/storage';
import { storedLocale } from './i18n';
import { Home } from './pages/Home';
import { About } from './pages/About';
import { Login } from './pages/Login';
import { Register } from './pages/Register';
import { ResetRequest } from './pages/ResetRequest';
import { ResetConfirm } from './pages/ResetConfirm';
import { OAuthCallback } from './pages/OAuthCallback';
import { Setup } from './pages/Setup';
import { NotFound } from './pages/NotFound';
import { featureRoutes } from './features';
import { RequireUser } from './pages/RequireUser';

/** react-admin's store, with the theme and language seeded from theme-mode / i18nextLng. */
export function createStore(): Store {
  const s = localStorageStore(undefined, 'gateway');
  s.setItem('theme', local().getItem(KEYS.themeMode) === 'dark' ? 'dark' : 'light');
  s.setItem('locale', storedLocale());
  return s;
}

/** Route aliases of the console (the paths users and links know) onto the resource screens (/channel/add → /channel/create …). */
function EditAlias({ resource }: { resource: string }) {
  const { id } = useParams();
  return <Navigate to={`/${resource}/${id}`} replace />;
}

/**
 * The shell. One react-query client serves react-admin and the status provider above it (which
 * loads /api/status for every screen, the public ones too).
 */
export const App = ({ i18nProvider, store = createStore() }: { i18nProvider: I18nProvider; store?: Store }) => {
  const [queryClient] = useState(() => new QueryClient());
  return (
    <BrowserRouter>
      <QueryClientProvider client={queryClient}>
        <StatusProvider>
          <Admin
            queryClient={queryClient}
            dataProvider={dataProvider()}
            authProvider={authProvider()}
            i18nProvider={i18nProvider}
            store={store}
            theme={lightTheme}
            darkTheme={darkTheme}
            defaultTheme="light"
            layout={AppLayout}
            loginPage={false}
            catchAll={NotFound}
            title="AI Gateway"
            disableTelemetry
          >
            <CustomRoutes>
              <Route path="/" element={<Home />} />
              <Route path="/setup" element={<Setup />} />
              <Route path="/login" element={<Login />} />
              <Route path="/register" element={<Register />} />
              <Route path="/reset" element={<ResetRequest />} />
              <Route path="/user/reset" element={<ResetConfirm />} />
              <Route path="/oauth/:type" element={<OAuthCallback />} />
              <Route path="/about" element={<About />} />
              <Route path="/channel/add" element={<Navigate to="/channel/create" replace />} />
              <Route path="/channel/edit/:id" element={<EditAlias resource="channel" />} />
              <Route path="/user/edit/:id" element={<EditAlias resource="user" />} />
              <Route path="/user/edit" element={<Navigate to="/personal" replace />} />
              {featureRoutes.map((p) => (
                <Route key={p.path} path={p.path} element={p.isPublic ? p.element : <RequireUser>{p.element}</RequireUser>} />
              ))}
            </CustomRoutes>
            {(permissions: number | null | undefined) => renderResources(permissions)}
          </Admin>
        </StatusProvider>
      </QueryClientProvider>
    </BrowserRouter>
  );
};
