import { useEffect, useState } from 'react';
import { useApi } from '../shared/api';
import { EMPTY_CATALOGUE, catalogueFrom, type ChannelTypeCatalogue } from './channelTypes';

/**
 * The channel-type catalogue (GET /api/channel/types), loaded once per page load and shared by
 * every screen: it only changes with a server release. A failed load is not cached, so the next
 * screen that needs it tries again; meanwhile screens work with the empty catalogue (`#id`
 * labels, no special form fields).
 */
let cached: ChannelTypeCatalogue | undefined;
let pending: Promise<ChannelTypeCatalogue> | undefined;

export function useChannelTypes(): { catalogue: ChannelTypeCatalogue; loading: boolean } {
  const http = useApi();
  const [catalogue, setCatalogue] = useState<ChannelTypeCatalogue | undefined>(cached);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (cached) return;
    let live = true;
    pending ??= http
      .get<unknown>('/api/channel/types')
      .then((r) => (cached = catalogueFrom(r.data)))
      .finally(() => {
        pending = undefined;
      });
    pending.then(
      (c) => live && setCatalogue(c),
      () => live && setFailed(true),
    );
    return () => {
      live = false;
    };
  }, [http]);
  return { catalogue: catalogue ?? EMPTY_CATALOGUE, loading: !catalogue && !failed };
}
