import { Box, Button, Dialog, DialogActions, DialogContent, DialogTitle, Link, Typography } from '@mui/material';
import { useTranslate } from 'react-admin';
import { useCopy } from '../../resources/shared/copy';

/** The result image, full size, with a link to the original. */
export function ImageViewer({ url, onClose }: { url: string | null; onClose: () => void }) {
  const translate = useTranslate();
  return (
    <Dialog open={!!url} onClose={onClose} maxWidth="lg" data-testid="image-viewer">
      <DialogTitle>{translate('feat.tasklogs.image_title')}</DialogTitle>
      <DialogContent sx={{ display: 'flex', justifyContent: 'center' }}>
        {url && <Box component="img" src={url} alt="" sx={{ maxWidth: '100%', maxHeight: '75vh', objectFit: 'contain', borderRadius: 1 }} />}
      </DialogContent>
      <DialogActions>
        {url && (
          <Link href={url} target="_blank" rel="noopener noreferrer" sx={{ mr: 'auto', ml: 2 }}>
            {translate('feat.tasklogs.open_original')}
          </Link>
        )}
        <Button onClick={onClose}>{translate('feat.tasklogs.close')}</Button>
      </DialogActions>
    </Dialog>
  );
}

/** A long text (failure reason, prompt) in full. */
export function TextDialog({ title, text, onClose }: { title: string; text: string | null; onClose: () => void }) {
  const translate = useTranslate();
  const { copy, dialog } = useCopy();
  return (
    <Dialog open={text !== null} onClose={onClose} fullWidth maxWidth="sm" data-testid="text-dialog">
      <DialogTitle>{title}</DialogTitle>
      <DialogContent>
        <Typography sx={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>{text}</Typography>
      </DialogContent>
      <DialogActions>
        <Button onClick={() => text && void copy(text)}>{translate('feat.tasklogs.copy')}</Button>
        <Button onClick={onClose}>{translate('feat.tasklogs.close')}</Button>
      </DialogActions>
      {dialog}
    </Dialog>
  );
}

/** A whole record as formatted JSON. */
export function JsonDialog({ title, value, onClose }: { title: string; value: unknown; onClose: () => void }) {
  const translate = useTranslate();
  const { copy, dialog } = useCopy();
  const text = value === null || value === undefined ? '' : JSON.stringify(value, null, 2);
  return (
    <Dialog open={value !== null && value !== undefined} onClose={onClose} fullWidth maxWidth="md" data-testid="json-dialog">
      <DialogTitle>{title}</DialogTitle>
      <DialogContent>
        <Box
          component="pre"
          sx={{
            m: 0,
            p: 2,
            bgcolor: 'action.hover',
            borderRadius: 1,
            fontSize: 13,
            overflow: 'auto',
            maxHeight: '65vh',
            whiteSpace: 'pre-wrap',
            wordBreak: 'break-all',
          }}
        >
          {text}
        </Box>
      </DialogContent>
      <DialogActions>
        <Button onClick={() => void copy(text)}>{translate('feat.tasklogs.copy')}</Button>
        <Button onClick={onClose}>{translate('feat.tasklogs.close')}</Button>
      </DialogActions>
      {dialog}
    </Dialog>
  );
}
