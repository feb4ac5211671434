import type { ReactNode } from 'react';
import { Box, Divider, Drawer, IconButton, Typography } from '@mui/material';
import CloseIcon from '@mui/icons-material/Close';
import { useTranslate } from 'react-admin';

/**
 * The drawer forms' action row: sticks to the bottom of the drawer's scrolling body, so submit and
 * cancel stay visible on short screens (the negative offsets cover the body's padding).
 */
export const STICKY_ACTIONS_SX = {
  position: 'sticky',
  bottom: -16,
  zIndex: 2,
  bgcolor: 'background.paper',
  borderTop: 1,
  borderColor: 'divider',
  mx: -2,
  px: 2,
  py: 1,
  mb: -2,
} as const;

/** Right-hand drawer used for the create/edit forms. */
export const SideDrawer = ({
  open,
  onClose,
  title,
  children,
  width = 600,
}: {
  open: boolean;
  onClose: () => void;
  title: string;
  children: ReactNode;
  width?: number;
}) => {
  const translate = useTranslate();
  return (
    <Drawer anchor="right" open={open} onClose={onClose} slotProps={{ paper: { sx: { width: { xs: '100%', sm: width } } } }}>
      <Box sx={{ display: 'flex', alignItems: 'center', px: 2, py: 1.5 }}>
        <Typography variant="h6" sx={{ flex: 1 }}>
          {translate(title)}
        </Typography>
        <IconButton onClick={onClose} aria-label="close">
          <CloseIcon />
        </IconButton>
      </Box>
      <Divider />
      <Box sx={{ p: 2, overflowY: 'auto', flex: 1 }} data-testid="drawer-body">
        {open ? children : null}
      </Box>
    </Drawer>
  );
};
