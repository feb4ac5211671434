import { Button } from '@mui/material';
import { SaveButton, Toolbar, useTranslate } from 'react-admin';

/** The drawer forms' buttons, right-aligned: cancel, then submit (enabled even before a change). */
export const FormButtons = ({ onCancel }: { onCancel: () => void }) => {
  const translate = useTranslate();
  return (
    <Toolbar sx={{ justifyContent: 'flex-end', gap: 1, px: 0, bgcolor: 'transparent' }}>
      <Button onClick={onCancel}>{translate('res.common.cancel')}</Button>
      <SaveButton label="res.common.submit" icon={<></>} alwaysEnable />
    </Toolbar>
  );
};
