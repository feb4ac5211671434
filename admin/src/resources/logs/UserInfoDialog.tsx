import { Box, Button, CircularProgress, Dialog, DialogActions, DialogContent, DialogTitle, Stack, Typography } from '@mui/material';
import { useGetOne, useTranslate } from 'react-admin';
import { useDisplaySettings, useNotifyError } from '../shared/hooks';
import { formatQuota } from '../shared/format';

/** The admin's user lookup from a log row: name, quota, used quota and request count. */
export const UserInfoDialog = ({ id, onClose }: { id: number | null; onClose: () => void }) => {
  const translate = useTranslate();
  const notifyError = useNotifyError();
  const display = useDisplaySettings();
  const { data: user } = useGetOne(
    'user',
    { id: id ?? 0 },
    {
      enabled: !!id,
      onError: (e) => {
        notifyError(e);
        onClose();
      },
    },
  );
  return (
    <Dialog open={!!id} onClose={onClose} fullWidth maxWidth="xs">
      <DialogTitle>{translate('res.log.user_info')}</DialogTitle>
      <DialogContent>
        {!user ? (
          <Box sx={{ display: 'flex', justifyContent: 'center', p: 3 }}>
            <CircularProgress size={24} />
          </Box>
        ) : (
          <Stack spacing={1}>
            <Typography>
              {translate('res.user.fields.username')}: {user.username}
            </Typography>
            <Typography>
              {translate('res.user.fields.quota')}: {formatQuota(user.quota, display)}
            </Typography>
            <Typography>
              {translate('res.user.fields.used_quota')}: {formatQuota(user.used_quota, display)}
            </Typography>
            <Typography>
              {translate('res.user.fields.request_count')}: {user.request_count ?? 0}
            </Typography>
          </Stack>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('res.common.close')}</Button>
      </DialogActions>
    </Dialog>
  );
};
