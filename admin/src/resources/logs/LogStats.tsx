import { Paper } from '@mui/material';
import { useListContext, useTranslate } from 'react-admin';
import { useQuery } from '@tanstack/react-query';
import { ColorTag } from '../shared/ColorTag';
import { useDisplaySettings } from '../shared/hooks';
import { compactNumber, formatQuota } from '../shared/format';
import { useGateway } from '../shared/api';

/** Quota, RPM and TPM of the logs the filters select (admins read the global stat, users their own). */
export const LogStats = ({ admin }: { admin: boolean }) => {
  const translate = useTranslate();
  const dp = useGateway();
  const display = useDisplaySettings();
  const { filterValues } = useListContext();
  const filters = filterValues ?? {};
  // The list's refresh invalidates every query, so the stats follow a refresh as they follow the filters.
  const { data: stat } = useQuery({ queryKey: ['log', 'stat', admin, filters], queryFn: () => dp.logStat(filters, admin) });
  return (
    <Paper variant="outlined" sx={{ mx: 2, mb: 2, px: 2, py: 1, display: 'flex', gap: 1, flexWrap: 'wrap', alignItems: 'center' }}>
      <ColorTag tone="blue" label={`${translate('res.log.stat.quota')}: ${stat ? formatQuota(stat.quota, display) : '-'}`} />
      <ColorTag tone="pink" label={`RPM: ${stat ? compactNumber(stat.rpm) : '-'}`} />
      <ColorTag tone="grey" label={`TPM: ${stat ? compactNumber(stat.tpm) : '-'}`} />
    </Paper>
  );
};
