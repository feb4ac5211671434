import { useDataProvider } from 'react-admin';
import { api, errorText, qs, type Api, type Envelope } from '../../lib/http';
import type { GatewayDataProvider } from '../../providers/dataProvider';
import { getUser } from '../../lib/storage';

export { api, errorText, qs };
export type { Api, Envelope };

/** The shell's data provider with the gateway's extra calls (testChannel, manageUser, logStat…). */
export function useGateway(): GatewayDataProvider {
  return useDataProvider<GatewayDataProvider>();
}

/** Plain API client (lib/http): get/post/put/del throw on success:false, raw answers the envelope. */
export function useApi(): Api {
  return api();
}

/** The logged-in user's role from the stored user (0 when unknown). */
export function storedUserRole(): number {
  return Number(getUser()?.role ?? 0) || 0;
}
