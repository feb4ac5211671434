import { Button, Dialog, DialogActions, DialogContent, DialogTitle, List, ListItem, ListItemIcon, ListItemText, Typography } from '@mui/material';
import CheckCircleIcon from '@mui/icons-material/CheckCircle';
import ErrorIcon from '@mui/icons-material/Error';
import { useTranslate } from 'react-admin';
import { bulkSummary, type BulkItem } from '../../lib/bulk';

export interface BulkResult {
  title: string;
  /** The server's message, shown above the items. */
  message?: string;
  items: BulkItem[];
}

/** What a bulk action did, item by item (failures first). */
export const BulkResultDialog = ({ result, onClose }: { result: BulkResult | null; onClose: () => void }) => {
  const translate = useTranslate();
  const items = result ? [...result.items].sort((a, b) => Number(a.ok) - Number(b.ok)) : [];
  return (
    <Dialog open={!!result} onClose={onClose} maxWidth="sm" fullWidth data-testid="bulk-result">
      <DialogTitle>{result ? translate(result.title, { _: result.title }) : ''}</DialogTitle>
      <DialogContent dividers>
        {result?.message && (
          <Typography variant="body2" sx={{ mb: 1 }}>
            {result.message}
          </Typography>
        )}
        {items.length > 0 && (
          <>
            <Typography variant="subtitle2">{bulkSummary(items, (k, o) => translate(k, o))}</Typography>
            <List dense>
              {items.map((i, n) => (
                <ListItem key={`${i.label}-${n}`} disableGutters>
                  <ListItemIcon sx={{ minWidth: 32 }}>
                    {i.ok ? <CheckCircleIcon color="success" fontSize="small" /> : <ErrorIcon color="error" fontSize="small" />}
                  </ListItemIcon>
                  <ListItemText primary={i.label} secondary={i.message ?? translate(i.ok ? 'app.bulk.ok' : 'app.bulk.failed')} />
                </ListItem>
              ))}
            </List>
          </>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('app.bulk.close')}</Button>
      </DialogActions>
    </Dialog>
  );
};
