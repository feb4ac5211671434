import type { ReactNode } from 'react';
import { Button, IconButton } from '@mui/material';
import AddIcon from '@mui/icons-material/Add';
import RefreshIcon from '@mui/icons-material/Refresh';
import { ColumnsButton, TopToolbar, useRefresh, useTranslate } from 'react-admin';

/** A list's actions bar: add, the list's own buttons (`children`), column choice and refresh. */
export const ListActions = ({
  addLabel,
  onAdd,
  addVariant = 'contained',
  children,
}: {
  addLabel: string;
  onAdd: () => void;
  addVariant?: 'contained' | 'outlined';
  children?: ReactNode;
}) => {
  const translate = useTranslate();
  const refresh = useRefresh();
  return (
    <TopToolbar sx={{ alignItems: 'center', gap: 1, flexWrap: 'wrap', minWidth: 0 }}>
      <Button variant={addVariant} startIcon={<AddIcon />} onClick={onAdd}>
        {translate(addLabel)}
      </Button>
      {children}
      <ColumnsButton />
      <IconButton onClick={() => refresh()}>
        <RefreshIcon />
      </IconButton>
    </TopToolbar>
  );
};
