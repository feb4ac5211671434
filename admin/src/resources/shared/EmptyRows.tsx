import { Typography } from '@mui/material';
import { useTranslate } from 'react-admin';

/** What a DataTable shows when the list has no rows: one centred, translated line. */
export const EmptyRows = ({ text }: { text: string }) => {
  const translate = useTranslate();
  return (
    <Typography color="text.secondary" sx={{ p: 4, textAlign: 'center' }}>
      {translate(text)}
    </Typography>
  );
};
