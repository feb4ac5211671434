import { Button } from '@mui/material';
import { SaveButton, Toolbar, useTranslate } from 'react-admin';
import { STICKY_ACTIONS_SX } from './SideDrawer';

/** The drawer forms' buttons, right-aligned: cancel, then submit (enabled even before a change); sticky at the drawer's bottom. */
export const FormButtons = ({ onCancel }: { onCancel: () => void }) => {
  const translate = useTranslate();
  return (
    <Toolbar sx={{ justifyContent: 'flex-end', gap: 1, minHeight: 0, ...STICKY_ACTIONS_SX }} data-testid="drawer-actions">
      <Button onClick={onCancel}>{translate('res.common.cancel')}</Button>
      <SaveButton label="res.common.submit" icon={<></>} alwaysEnable />
    </Toolbar>
  );
};
