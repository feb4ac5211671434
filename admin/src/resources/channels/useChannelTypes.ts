import { useQuery } from '@tanstack/react-query';
import { useApi } from '../shared/api';
import { EMPTY_CATALOGUE, catalogueFrom, type ChannelTypeCatalogue } from './channelTypes';

/**
 * The channel-type catalogue (GET /api/channel/types), loaded once per page load and shared by
 * every screen: it only changes with a server release, so once loaded it is never asked again (not
 * on a list's refresh either). A failed load is not kept, so the next screen that needs it tries
 * again; meanwhile screens work with the empty catalogue (`#id` labels, no special form fields).
 */
export function useChannelTypes(): { catalogue: ChannelTypeCatalogue; loading: boolean } {
  const http = useApi();
  const { data, isFetching } = useQuery({
    queryKey: ['channel', 'types'],
    queryFn: () => http.get<unknown>('/api/channel/types').then((r) => catalogueFrom(r.data)),
    enabled: (query) => query.state.data === undefined,
    gcTime: Infinity,
    retry: false,
    refetchOnWindowFocus: false,
  });
  return { catalogue: data ?? EMPTY_CATALOGUE, loading: !data && isFetching };
}
