import { Box, Button, Dialog, DialogActions, DialogContent, DialogTitle, Table, TableBody, TableCell, TableRow, Typography } from '@mui/material';
import { useTranslate } from 'react-admin';
import { formatQuota, formatTimestamp, type DisplaySettings } from '../shared/format';
import { fieldText, recordExtra, recordFields } from './logRecord';
import { logDetail, logTypeKey } from './logDisplay';

/** The whole record of one log row: every field, the billing detail line and `other` as JSON. */
export const LogDetailDialog = ({ row, display, onClose }: { row: Record<string, unknown> | null; display: DisplaySettings; onClose: () => void }) => {
  const translate = useTranslate();
  if (!row) return null;
  const d = logDetail(row as never);
  const summary = d.parts.length ? d.parts.map((p) => translate(p.key, p.params)).join('  ') : (d.text ?? '');
  const extra = recordExtra(row);
  const shown = (key: string, value: unknown): string => {
    if (key === 'created_at') return `${formatTimestamp(Number(value))} (${fieldText(value)})`;
    if (key === 'quota') return `${formatQuota(Number(value), display)} (${fieldText(value)})`;
    if (key === 'type') return `${translate(`res.log.type.${logTypeKey(Number(value))}`)} (${fieldText(value)})`;
    return fieldText(value);
  };
  return (
    <Dialog open onClose={onClose} maxWidth="md" fullWidth data-testid="log-detail">
      <DialogTitle>{translate('res.log.record_title', { id: fieldText(row.id) })}</DialogTitle>
      <DialogContent dividers>
        {summary && (
          <Typography variant="body2" sx={{ mb: 1, whiteSpace: 'pre-wrap', wordBreak: 'break-word' }} data-testid="log-detail-summary">
            {summary}
          </Typography>
        )}
        <Table size="small">
          <TableBody>
            {recordFields(row).map((f) => (
              <TableRow key={f.key}>
                <TableCell sx={{ fontWeight: 600, whiteSpace: 'nowrap', verticalAlign: 'top', width: 160 }}>
                  {translate(`res.log.fields.${f.key}`, { _: f.key })}
                </TableCell>
                <TableCell sx={{ wordBreak: 'break-word', whiteSpace: 'pre-wrap' }} data-testid={`log-detail-${f.key}`}>
                  {shown(f.key, f.value)}
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
        {extra && (
          <Box component="pre" sx={{ mt: 2, p: 1, bgcolor: 'action.hover', borderRadius: 1, overflowX: 'auto', fontSize: 12 }} data-testid="log-detail-other">
            {extra}
          </Box>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('app.bulk.close')}</Button>
      </DialogActions>
    </Dialog>
  );
};
